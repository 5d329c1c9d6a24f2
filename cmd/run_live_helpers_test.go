//go:build unix

package cmd

import (
	"net/url"
	"os"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/internal/tcpproxy"
)

// liveServer is one throwaway test server of $SCHEDLOCK_TEST_*_DSN.
type liveServer struct {
	name string // postgres or mysql
	dsn  string
	addr string                   // host:port of the server
	via  func(addr string) string // the DSN pointing at addr instead
}

// liveServers returns the test servers whose DSN is set; the test is
// skipped when none is.
func liveServers(t *testing.T) []liveServer {
	t.Helper()
	var out []liveServer
	if raw := os.Getenv("SCHEDLOCK_TEST_POSTGRES_DSN"); raw != "" {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("SCHEDLOCK_TEST_POSTGRES_DSN: %v", err)
		}
		out = append(out, liveServer{name: "postgres", dsn: raw, addr: u.Host,
			via: func(addr string) string { v := *u; v.Host = addr; return v.String() }})
	}
	if raw := os.Getenv("SCHEDLOCK_TEST_MYSQL_DSN"); raw != "" {
		cfg, err := gomysql.ParseDSN(raw)
		if err != nil || strings.Contains(raw, "://") {
			t.Fatalf("SCHEDLOCK_TEST_MYSQL_DSN must be go-sql-driver's form: %v", err)
		}
		out = append(out, liveServer{name: "mysql", dsn: raw, addr: cfg.Addr,
			via: func(addr string) string { c := cfg.Clone(); c.Addr = addr; return c.FormatDSN() }})
	}
	if len(out) == 0 {
		t.Skip("no SCHEDLOCK_TEST_POSTGRES_DSN or SCHEDLOCK_TEST_MYSQL_DSN set")
	}
	return out
}

// proxy starts a TCP proxy to s for the test's duration; its Restore runs
// first at cleanup, so that a stalled proxy holds up no other cleanup.
func proxy(t *testing.T, s liveServer) *tcpproxy.Proxy {
	t.Helper()
	p, err := tcpproxy.Start(s.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	t.Cleanup(p.Restore)
	return p
}
