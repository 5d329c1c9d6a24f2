package zookeeper_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
	"github.com/schedlock/schedlock/dialects/zookeeper"
	"github.com/schedlock/schedlock/internal/livetest"
)

// dsnEnv names the live ZooKeeper of the tests (scripts/test.sh sets it).
const dsnEnv = "SCHEDLOCK_TEST_ZK_DSN"

// liveDSN is the live ZooKeeper's DSN; the test is skipped without one.
func liveDSN(t testing.TB) string {
	t.Helper()
	dsn := livetest.DSN(t, dsnEnv)
	return dsn
}

// withParams adds query parameters to a DSN.
func withParams(dsn, params string) string {
	if strings.Contains(dsn, "?") {
		return dsn + "&" + params
	}
	return dsn + "?" + params
}

// openLive opens the live ZooKeeper; an unreachable one fails the test.
func openLive(t testing.TB, dsn string) *zookeeper.Backend {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	b, err := zookeeper.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("open %s: %v", dsnEnv, err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// newTable is a table unique to the test, created now and dropped after.
func newTable(t testing.TB, b *zookeeper.Backend) *zookeeper.Locker {
	t.Helper()
	tl, err := b.LeaseLocker(dialects.Table{Name: checks.NewPrefix()})
	if err != nil {
		t.Fatal(err)
	}
	l := tl.(*zookeeper.Locker)
	if err := l.CreateTable(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := l.DropTable(ctx); err != nil {
			t.Errorf("drop table: %v", err)
		}
	})
	return l
}

// TestConformance runs the lock contract's suite against the live
// ZooKeeper, on a table node unique to the run.
func TestConformance(t *testing.T) {
	dsn := liveDSN(t)
	t.Parallel()
	b := openLive(t, dsn)
	table := dialects.Table{Preset: dialects.PresetSchedlock, Name: checks.NewPrefix()}
	dialecttest.Run(t, b, dialecttest.Options{Tables: []dialects.Table{table}})

	l, err := b.LeaseLocker(table)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.Inspect(t.Context(), "any"); !strings.Contains(errString(err), "does not exist") {
		t.Errorf("table %s after the run: Inspect = %v; want the table missing (dropped)", table.Name, err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
