package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
	"github.com/schedlock/schedlock/dialects/sqlite"
)

// TestConformance runs the lock-contract suite on a temporary file: the
// table strategy (SQLite's only one) on every preset, each table made and
// dropped by the run.
func TestConformance(t *testing.T) {
	sqlDB := openDB(t, filepath.Join(t.TempDir(), "conformance.db"))
	db, err := sqlite.New(t.Context(), sqlDB, nil)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	dialecttest.Run(t, db, dialecttest.Options{Strategies: []dialects.Strategy{dialects.StrategyTable}})
}
