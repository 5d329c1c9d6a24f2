package mongodb_test

import (
	"context"
	"testing"
	"time"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
	"github.com/schedlock/schedlock/dialects/mongodb"
	"github.com/schedlock/schedlock/dialects/mongodb/mongotest"
	"github.com/schedlock/schedlock/internal/livetest"
)

// liveDSN is the live server of SCHEDLOCK_TEST_MONGODB_DSN (FerretDB in
// scripts/test.sh); without it the live tests skip, and with it an
// unreachable server fails them.
func liveDSN(t testing.TB) string { t.Helper(); return livetest.DSN(t, livetest.MongoDB) }

// serialDSN is the live server behind a proxy that passes one command
// at a time (mongotest.Serialize: FerretDB's conditional updates are not
// atomic on their own).
func serialDSN(t testing.TB) string { t.Helper(); return mongotest.Serialize(t, liveDSN(t)) }

// openLive opens the live server through serialDSN, closed when the test
// ends.
func openLive(t testing.TB) *mongodb.Backend {
	t.Helper()
	return open(t, serialDSN(t))
}

// open opens dsn, closed when the test ends.
func open(t testing.TB, dsn string) *mongodb.Backend {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	b, err := mongodb.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("open the live MongoDB server: %v", err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// throwaway are the risks of two holders of the tests' server: FerretDB
// 1.24's updates are not atomic, which the serializing proxy of
// openLive makes up for (the standalone risk costs availability only).
var throwaway = []string{dialects.RiskNonAtomicUpdates}

// TestConformance runs the lock contract's suite on both layouts, each
// in a collection of its own that the run drops.
func TestConformance(t *testing.T) {
	b := openLive(t)
	p := checks.NewPrefix()
	dialecttest.Run(t, b, dialecttest.Options{Tables: []dialects.Table{
		{Preset: dialects.PresetSchedlock, Name: p},
		{Preset: dialects.PresetShedlock, Name: p + "_shedlock"},
	}, AllowRisks: throwaway})
}
