package etcd_test

import (
	"context"
	"testing"
	"time"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
	"github.com/schedlock/schedlock/dialects/etcd"
	"github.com/schedlock/schedlock/internal/livetest"
)

// dsnEnv names the live etcd the tests run on; without it they skip, and
// with it an unreachable etcd fails them.
const dsnEnv = "SCHEDLOCK_TEST_ETCD_DSN"

// liveDSN returns the live DSN or skips t.
func liveDSN(t testing.TB) string {
	t.Helper()
	dsn := livetest.DSN(t, dsnEnv)
	return dsn
}

// openLive opens the live etcd, closed when t ends.
func openLive(t testing.TB) *etcd.Backend {
	t.Helper()
	return openDSN(t, liveDSN(t))
}

// openDSN opens dsn, closed when t ends.
func openDSN(t testing.TB, dsn string) *etcd.Backend {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := etcd.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("open %s: %v", dsn, err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// TestConformance runs the lock contract's suite on the live etcd, in a
// lock space of its own (a table name is one more path segment).
func TestConformance(t *testing.T) {
	b := openLive(t)
	dialecttest.Run(t, b, dialecttest.Options{Tables: []dialects.Table{{Name: checks.NewPrefix()}}})
}
