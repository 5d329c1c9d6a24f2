package redis_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/redis"
	"github.com/schedlock/schedlock/internal/testnet"
	"github.com/schedlock/schedlock/internal/testpki"
)

// ownTLSServer starts a redis-server of the test's own that speaks TLS
// only, asking clients for a certificate of pki's CA, and returns its port.
func ownTLSServer(t *testing.T, pki testpki.Files) int {
	t.Helper()
	liveDSN(t)
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("the TLS test needs redis-server: %v", err)
	}
	port := testnet.FreePort(t)
	cmd := exec.Command(bin, "--port", "0", "--tls-port", fmt.Sprint(port), "--bind", "127.0.0.1",
		"--tls-cert-file", pki.ServerCert, "--tls-key-file", pki.ServerKey, "--tls-ca-cert-file", pki.CA,
		"--tls-auth-clients", "yes", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	cert, err := tls.LoadX509KeyPair(pki.ClientCert, pki.ClientKey)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := tls.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port), &tls.Config{InsecureSkipVerify: true, Certificates: []tls.Certificate{cert}})
		if err == nil {
			_ = c.Close()
			return port
		}
		if time.Now().After(deadline) {
			t.Fatalf("the TLS redis-server did not answer within 10s: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTLS: rediss:// against a TLS-only redis-server of the test's own
// that verifies client certificates. With the CA and a client certificate
// named in the DSN (cacert, cert, key) a lock is taken, refused to another
// owner and released; without the client certificate, without the CA, or
// with the CA file missing, opening fails in one line; the TLS options on
// redis:// are a usage error.
func TestTLS(t *testing.T) {
	pki := testpki.New(t)
	port := ownTLSServer(t, pki)
	base := fmt.Sprintf("rediss://127.0.0.1:%d/0?dial_timeout=2s", port)
	withFiles := base + "&cacert=" + url.QueryEscape(pki.CA) + "&cert=" + url.QueryEscape(pki.ClientCert) + "&key=" + url.QueryEscape(pki.ClientKey)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	b, err := redis.Open(ctx, withFiles)
	if err != nil {
		t.Fatalf("open with the CA and a client certificate: %v", err)
	}
	defer b.Close()
	l, err := b.Locker(dialects.StrategyTable, dialects.Table{Name: "schedlock_tls"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.(dialects.TableDropper).DropTable(context.Background())
	lease, err := l.Acquire(ctx, "report", dialects.Options{Owner: "over-tls", AtMost: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(ctx, "report", dialects.Options{Owner: "other"}); !errors.Is(err, dialects.ErrHeld) {
		t.Errorf("another owner over TLS: %v, want held", err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name, dsn string
		invalid   bool
	}{
		{"no client certificate", base + "&cacert=" + url.QueryEscape(pki.CA), false},
		{"no CA: the system's do not know the test's", base, false},
		{"a CA file that is missing", base + "&cacert=" + url.QueryEscape(pki.CA+".missing"), true},
		{"a certificate without its key", base + "&cacert=" + url.QueryEscape(pki.CA) + "&cert=" + url.QueryEscape(pki.ClientCert), true},
		{"TLS options on redis://", strings.Replace(withFiles, "rediss://", "redis://", 1), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, err := redis.Open(ctx, c.dsn)
			if err == nil {
				b.Close()
				t.Fatal("opened")
			}
			var unreachable *dialects.UnreachableError
			if errors.Is(err, dialects.ErrInvalid) != c.invalid || errors.As(err, &unreachable) == c.invalid || strings.Contains(err.Error(), "\n") {
				t.Errorf("%v: want one line, a usage error %v, else a connection failure", err, c.invalid)
			}
			t.Log(err)
		})
	}
}

// TestTLSModeMismatch: rediss:// naming a plaintext port, and redis://
// naming a TLS port, each fail in one line that says which it is, without
// waiting out every dial retry.
func TestTLSModeMismatch(t *testing.T) {
	plain, err := url.Parse(liveDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	pki := testpki.New(t)
	tlsPort := ownTLSServer(t, pki)
	for _, c := range []struct{ name, dsn, want string }{
		{"rediss:// to a plaintext port", "rediss://" + plain.Host + "/0?dial_timeout=1s", "use redis://"},
		{"redis:// to a TLS port", fmt.Sprintf("redis://127.0.0.1:%d/0?dial_timeout=1s", tlsPort), "use rediss://"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			start := time.Now()
			b, err := redis.Open(ctx, c.dsn)
			if err == nil {
				b.Close()
				t.Fatal("opened")
			}
			var unreachable *dialects.UnreachableError
			if !errors.As(err, &unreachable) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%v: want one line, a connection failure", err)
			}
			if hint := connectHintOf(err); !strings.Contains(hint, c.want) {
				t.Errorf("%v: hint %q does not say %q", err, hint, c.want)
			}
			t.Logf("%v (after %v)", err, time.Since(start).Round(time.Millisecond))
		})
	}
}

// connectHintOf is the hint the command line prints after err.
func connectHintOf(err error) string {
	d, _ := dialects.Lookup(redis.Name)
	var unreachable *dialects.UnreachableError
	if errors.As(err, &unreachable) {
		err = unreachable.Err
	}
	return d.ConnectHint(err)
}
