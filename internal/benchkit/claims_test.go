package benchkit_test

import (
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlite"
	"github.com/schedlock/schedlock/internal/benchkit"
)

// TestRunClaimsOnSQLite measures a few claims of the engine and the raw
// statement on a SQLite file: both claim rows, and the table is dropped.
func TestRunClaimsOnSQLite(t *testing.T) {
	sqlDB, err := sql.Open(sqlite.DriverName, sqlite.DSN(filepath.Join(t.TempDir(), "bench.db")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sqlDB.Close() })
	db, err := sqlite.New(t.Context(), sqlDB, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := benchkit.RunClaims(t.Context(), db, benchkit.ClaimPlan{Workers: 2, Batch: 5, Budget: benchkit.Budget{Cycles: 20}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Raw == nil || r.Raw.Rows == 0 || r.Raw.Errors != 0 {
		t.Fatalf("raw: %+v", r.Raw)
	}
	if len(r.Strategies) != 1 || r.Strategies[0].Engine.Rows == 0 || r.Strategies[0].EngineToRaw == nil || r.Strategies[0].FirstError != "" {
		t.Fatalf("strategies: %+v", r.Strategies)
	}
	if len(r.Anchors) != 3 || r.Recommended != string(dialects.ClaimOptimistic) {
		t.Fatalf("anchors %d, recommended %q", len(r.Anchors), r.Recommended)
	}
	var n int
	if err := sqlDB.QueryRow("SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'sl_bench_%'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("bench tables left behind: %d, %v", n, err)
	}
	if _, err := benchkit.RunClaims(t.Context(), db, benchkit.ClaimPlan{Workers: 1, Batch: 5, Strategies: []dialects.ClaimStrategy{dialects.ClaimSkipLocked}}); !errors.Is(err, dialects.ErrUnsupported) {
		t.Fatalf("skip-locked on SQLite: %v; want ErrUnsupported", err)
	}
	if _, err := benchkit.RunClaims(t.Context(), db, benchkit.ClaimPlan{Workers: 1, Batch: 0}); !errors.Is(err, dialects.ErrInvalid) {
		t.Fatalf("batch 0: %v; want ErrInvalid", err)
	}
}
