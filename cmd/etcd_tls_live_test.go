//go:build unix

package cmd

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/testpki"
)

// TestEtcdTLS: etcds:// against an etcd member of the test's own that
// serves clients over TLS only and asks them for a certificate of its CA.
// With cacert, cert and key in the DSN, detect and a lock cycle work;
// without the client certificate or without the CA, the command fails in
// one line (exit 1) with what to add; the options on etcd:// are a usage
// error (exit 2).
func TestEtcdTLS(t *testing.T) {
	etcdLive(t)
	pki := testpki.New(t)
	m := newEtcdMembers(t, 1)[0]
	m.pki = &pki
	m.start(t)
	dsn := m.dsn()

	if r := runWithInput(t, false, "", "detect", "--dsn", dsn); r.err != nil || !strings.Contains(r.stdout, "etcd") {
		t.Fatalf("detect over TLS: %v\n%s", r.err, r.stdout)
	}
	b := openEtcd(t, dsn)
	l := etcdLocker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lease, err := l.Acquire(ctx, "report", dialects.Options{Owner: "over-tls", AtMost: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(ctx, "report", dialects.Options{Owner: "other"}); !errors.Is(err, dialects.ErrHeld) {
		t.Errorf("another owner over TLS: %v, want held", err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}

	base := "etcds://" + m.client + "/fault?dial-timeout=2s"
	for _, c := range []struct {
		name, dsn string
		code      int
		says      string // in the error
	}{
		{"no client certificate", base + "&cacert=" + url.QueryEscape(pki.CA), 1, "asks for a client certificate"},
		{"no CA", base, 1, "certificate is not trusted here"},
		{"TLS options on etcd://", strings.Replace(dsn, "etcds://", "etcd://", 1), 2, "use etcds://"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runWithInput(t, false, "", "detect", "--dsn", c.dsn)
			msg := fmt.Sprint(r.err)
			if r.err == nil || ExitCode(r.err) != c.code || strings.Contains(msg, "\n") || !strings.Contains(msg, c.says) {
				t.Errorf("detect: exit %d, %q; want exit %d and one line saying %q", ExitCode(r.err), msg, c.code, c.says)
			}
			t.Logf("exit %d: %v", ExitCode(r.err), r.err)
		})
	}
}
