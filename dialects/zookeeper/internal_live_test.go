package zookeeper

import (
	"context"
	"os"
	"testing"
	"time"
)

// liveBackend opens the live ZooKeeper for the package's own tests, with
// a context for the test's calls; both end with t. Without
// SCHEDLOCK_TEST_ZK_DSN t skips; with it, an unreachable server fails t.
func liveBackend(t *testing.T) (context.Context, *Backend) {
	t.Helper()
	dsn := os.Getenv("SCHEDLOCK_TEST_ZK_DSN")
	if dsn == "" {
		t.Skip("SCHEDLOCK_TEST_ZK_DSN is not set")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	b, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return ctx, b
}
