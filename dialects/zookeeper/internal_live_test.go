package zookeeper

import (
	"context"
	"testing"
	"time"

	"github.com/schedlock/schedlock/internal/livetest"
)

// liveBackend opens the live ZooKeeper for the package's own tests, with
// a context for the test's calls; both end with t. Without
// SCHEDLOCK_TEST_ZK_DSN t skips; with it, an unreachable server fails t.
func liveBackend(t *testing.T) (context.Context, *Backend) {
	t.Helper()
	dsn := livetest.DSN(t, livetest.ZooKeeper)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	b, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return ctx, b
}
