package checks

import (
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlite"
)

// TestRunOnSQLite runs the whole suite, as `schedlock selfcheck` does with
// no options, on a temporary SQLite file, and proves it passes and leaves
// no table behind. (dialecttest's own test covers the ShedLock preset on
// SQLite; the fake dialect covers every preset.)
func TestRunOnSQLite(t *testing.T) {
	ctx := t.Context()
	sqlDB, err := sql.Open(sqlite.DriverName, sqlite.DSN(filepath.Join(t.TempDir(), "selfcheck.db")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sqlDB.Close() })
	db, err := sqlite.New(ctx, sqlDB, nil)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	cfg := Config{Backend: db, Prefix: NewPrefix()}
	runner, err := NewRunner(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tables := runner.Config().Tables
	if len(tables) != 1 || tables[0].Preset != dialects.PresetSchedlock {
		t.Fatalf("default tables %+v; want one native table", tables)
	}
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	assertCounts(t, rep)
	for _, r := range rep.Results {
		t.Logf("%-34s %-4s %6s  %s", r.ID, r.Status, ms(r.Duration), r.Detail)
		if r.Status == StatusFail {
			t.Errorf("%s failed: %s (remedy: %s)", r.ID, r.Detail, r.Remedy)
		}
	}
	if rep.Failed != 0 {
		t.Errorf("%d checks failed", rep.Failed)
	}
	byID := results(rep)
	for id := range byID {
		if len(id) > 8 && id[:8] == "session." {
			t.Errorf("session check %s listed on SQLite, which has no session locks", id)
		}
	}
	for _, table := range tables {
		l, err := db.TableLocker(table)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := l.Inspect(ctx, cfg.Prefix); !errors.Is(err, dialects.ErrNoTable) {
			t.Errorf("table %s after the run: Inspect = %v; want ErrNoTable (dropped)", table.Name, err)
		}
	}
	t.Logf("%d checks in %s", len(rep.Results), ms(rep.Elapsed))
}
