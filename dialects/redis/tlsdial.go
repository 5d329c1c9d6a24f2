package redis

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"sync"
	"time"
)

// errPlaintext is a TLS handshake that got no answer from a port where a
// plaintext Redis answers: a rediss:// URL naming a redis:// port. A
// plaintext Redis waits for the end of a line that a TLS ClientHello
// never sends, so without this the dial only times out. It is not
// retried.
var errPlaintext = errors.New("the TLS handshake got no answer, and the port answers plain Redis (RESP without TLS)")

// errSilent is a TLS handshake that got no answer from a port that
// answers no plain PING either: nothing that speaks Redis listens there,
// or the server hangs.
var errSilent = errors.New("the port took the connection but answered neither the TLS handshake nor a plain PING")

// errNoReply is a plaintext connection the server closed before any
// reply, as a TLS-only port does (and a server at its client limit).
var errNoReply = errors.New("the server closed the connection without a reply")

// plaintextProbeTimeout bounds the plain PING sent after a handshake
// that timed out.
const plaintextProbeTimeout = time.Second

// plaintextMemory is how long an address that answered plain RESP fails
// a TLS dial at once (a long-running client dials it anew after).
const plaintextMemory = 30 * time.Second

// tlsDialer dials addr and runs the TLS handshake of cfg, both within
// timeout (go-redis's DialTimeout), as go-redis's own dialer does. When
// the handshake times out it sends a plain PING to addr: a RESP answer
// means a plaintext Redis, reported as errPlaintext.
//
// go-redis's pool dials again on failure (DialerRetries, 5 by default):
// an address found plaintext fails at once for plaintextMemory after, so
// the caller hears within one dial timeout, not five; one that answered
// nothing (errSilent) fails at once for one dial timeout, which covers
// the pool's retries but not a later dial (the server may come back).
func tlsDialer(cfg *tls.Config, timeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var failed sync.Map // addr → dialFailure
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if f, found := failed.Load(addr); found && time.Since(f.(dialFailure).at) < f.(dialFailure).memory {
			return nil, f.(dialFailure).err
		}
		d := &net.Dialer{Timeout: timeout, KeepAlive: 5 * time.Minute}
		raw, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		c := cfg.Clone()
		if c.ServerName == "" {
			if host, _, err := net.SplitHostPort(addr); err == nil {
				c.ServerName = host
			}
		}
		hctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		conn := tls.Client(raw, c)
		err = conn.HandshakeContext(hctx)
		if err == nil {
			return conn, nil
		}
		_ = raw.Close()
		// go-redis's ctx carries the dial timeout too: only a cancel (the
		// caller gave up) skips the probe, which gets its own second.
		if hctx.Err() == nil || errors.Is(ctx.Err(), context.Canceled) {
			return nil, err
		}
		if answersPlainRESP(context.WithoutCancel(ctx), d, network, addr) {
			failed.Store(addr, dialFailure{at: time.Now(), memory: plaintextMemory, err: errPlaintext})
			return nil, errPlaintext
		}
		failed.Store(addr, dialFailure{at: time.Now(), memory: timeout, err: errSilent})
		return nil, errSilent
	}
}

// dialFailure is an address's last known answer to a TLS dial: err again
// until memory has passed since at.
type dialFailure struct {
	at     time.Time
	memory time.Duration
	err    error
}

// answersPlainRESP reports whether addr answers a plain PING with a RESP
// reply: +PONG, or an error such as -NOAUTH.
func answersPlainRESP(ctx context.Context, d *net.Dialer, network, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, plaintextProbeTimeout)
	defer cancel()
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return false
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	return err == nil && (strings.HasPrefix(line, "+") || strings.HasPrefix(line, "-"))
}
