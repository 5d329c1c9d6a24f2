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

// TestRunClaimsOnSQLite measures a little claim work of the engine and of
// the raw SQL on a SQLite file — claim and complete per row, claim and
// complete the batch, and the claim alone: every one does rows of work and
// loses none, and the table is dropped.
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
	checkWork(t, r, benchkit.WorkComplete, benchkit.WorkCompleteBatch)
	only, err := benchkit.RunClaims(t.Context(), db, benchkit.ClaimPlan{Workers: 2, Batch: 5, NoComplete: true, Budget: benchkit.Budget{Cycles: 20}})
	if err != nil {
		t.Fatal(err)
	}
	checkWork(t, only, benchkit.WorkClaim)
	if len(r.Anchors) != 3 || r.Recommended != string(dialects.ClaimOptimistic) {
		t.Fatalf("anchors %d, recommended %q", len(r.Anchors), r.Recommended)
	}
	if r.ReadyRows < 1000 || r.ReadyRows > r.Rows {
		t.Fatalf("ready rows %d of %d given; want the filler's 1,000 at least", r.ReadyRows, r.Rows)
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

// checkWork: the report has works, in order, each raw and through the
// engine with rows done, none lost and no error.
func checkWork(t *testing.T, r *benchkit.ClaimsReport, works ...string) {
	t.Helper()
	if len(r.Work) != len(works) {
		t.Fatalf("work %+v; want %v", r.Work, works)
	}
	for i, w := range r.Work {
		if w.Work != works[i] || w.Raw == nil || w.Raw.Rows == 0 || w.Raw.Errors != 0 || w.Raw.Lost != 0 || len(w.RawStatements) == 0 {
			t.Errorf("%s: raw %+v", works[i], w.Raw)
		}
		if len(w.Strategies) != 1 || w.Strategies[0].Engine.Rows == 0 || w.Strategies[0].Engine.Lost != 0 || w.Strategies[0].EngineToRaw == nil || w.Strategies[0].FirstError != "" {
			t.Errorf("%s: strategies %+v", works[i], w.Strategies)
		}
	}
}
