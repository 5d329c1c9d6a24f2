package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
	"github.com/schedlock/schedlock/dialects/redis"
	"github.com/schedlock/schedlock/internal/livetest"
)

// liveDSN is the throwaway Redis of the tests; without it the live tests
// skip, and with it an unreachable server fails them.
func liveDSN(t testing.TB) string {
	t.Helper()
	dsn := livetest.DSN(t, livetest.Redis)
	return dsn
}

// openLive opens the live Redis, closed when the test ends.
func openLive(t testing.TB) *redis.Backend {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := redis.Open(ctx, liveDSN(t))
	if err != nil {
		t.Fatalf("open the live Redis: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// throwaway are the risks of the tests' own servers, started without
// persistence (scripts/services.sh, ownServer); a Sentinel or a Cluster
// adds asynchronous replication.
var throwaway = []string{dialects.RiskNoPersistence}

// TestConformance runs the lock contract's suite on both key layouts,
// each under a prefix of its own that the run removes.
func TestConformance(t *testing.T) {
	b := openLive(t)
	p := "schedlock_conformance_" + dialects.NewOwner()[len(dialects.NewOwner())-8:]
	dialecttest.Run(t, b, dialecttest.Options{Tables: []dialects.Table{
		{Preset: dialects.PresetSchedlock, Name: p},
		{Preset: dialects.PresetShedlock, Name: p + "_shedlock"},
	}, AllowRisks: throwaway})
}
