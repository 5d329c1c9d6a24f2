package cmd

import (
	"strings"
	"testing"

	"github.com/schedlock/schedlock/internal/tcpproxy"
	"github.com/schedlock/schedlock/internal/testnet"
)

// A store whose port refuses connections says so in one line, as a
// database does: etcd's client retries a refused dial until its dial
// timeout and would only say that no member answered.
func TestStoresSayConnectionRefused(t *testing.T) {
	for _, scheme := range []string{"redis", "etcd", "zk"} {
		t.Run(scheme, func(t *testing.T) {
			dsn := scheme + "://" + testnet.FreeAddr(t) + "/x"
			if scheme == "redis" {
				dsn = strings.TrimSuffix(dsn, "x") + "0"
			}
			r := runCmd(t, false, nil, "run", "--dsn", dsn, "--name", "refused", "--", "true")
			if code := ExitCode(r.err); code != CodeError {
				t.Fatalf("exit %d (%v), want %d", code, r.err, CodeError)
			}
			if msg := r.err.Error(); !strings.Contains(msg, "connection refused — is the server running?") {
				t.Errorf("error %q: want it to say the connection was refused", msg)
			}
		})
	}
}

// A port that accepts connections and never answers (not a Redis server,
// or one that hangs): the wait is Redis's read_timeout, not --timeout, so
// the hint names that.
func TestRedisSilentServerNamesReadTimeout(t *testing.T) {
	dsn := "redis://" + silentListener(t) + "/0?read_timeout=300ms&dial_timeout=300ms"
	r := runCmd(t, false, nil, "run", "--timeout", "1m", "--dsn", dsn, "--name", "silent", "--", "true")
	if code := ExitCode(r.err); code != CodeError {
		t.Fatalf("exit %d (%v), want %d", code, r.err, CodeError)
	}
	msg := r.err.Error()
	if !strings.Contains(msg, "timed out") || !strings.Contains(msg, "read_timeout=") || strings.Contains(msg, "--timeout") {
		t.Errorf("error %q: want a time-out naming read_timeout, not --timeout", msg)
	}
}

// etcds:// to a port that takes the connection and never answers: no
// member answered — not a certificate problem, and no advice to use the
// etcds:// the DSN already has.
func TestEtcdsSilentPortIsNoAnswer(t *testing.T) {
	addr := silentListener(t)
	r := runCmd(t, false, nil, "run", "--dsn", "etcds://"+addr+"/x?dial-timeout=1s", "--name", "silent", "--", "true")
	if code := ExitCode(r.err); code != CodeError {
		t.Fatalf("exit %d (%v), want %d", code, r.err, CodeError)
	}
	msg := r.err.Error()
	if !strings.Contains(msg, "no etcd member answered") || strings.Contains(msg, "certificate") || strings.Contains(msg, "Use etcds://") {
		t.Errorf("error %q: want no answer, without certificate advice or etcds://", msg)
	}
}

// silentListener is a loopback address that takes connections and never
// answers, until the test ends: a stalled proxy (to a port nothing
// listens on, which a stalled proxy never dials).
func silentListener(t *testing.T) string {
	t.Helper()
	p, err := tcpproxy.Start(testnet.FreeAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	p.Stall()
	t.Cleanup(func() { _ = p.Close() })
	return p.Addr()
}

// rediss:// to a port that takes the connection and answers neither TLS
// nor plain Redis: the dial says so after one handshake and one plain
// PING, instead of its retries running out --timeout.
func TestRedissSilentPortSaysNothingAnswered(t *testing.T) {
	addr := silentListener(t)
	r := runCmd(t, false, nil, "run", "--timeout", "20s", "--dsn", "rediss://"+addr+"/0?dial_timeout=1s&read_timeout=1s", "--name", "silent", "--", "true")
	if code := ExitCode(r.err); code != CodeError {
		t.Fatalf("exit %d (%v), want %d", code, r.err, CodeError)
	}
	msg := r.err.Error()
	if strings.Contains(msg, "gave up") || !strings.Contains(msg, "neither") || !strings.Contains(msg, "dial_timeout=") {
		t.Errorf("error %q: want the dial's own answer (neither TLS nor plain Redis), not --timeout running out", msg)
	}
}
