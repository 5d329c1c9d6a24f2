package dialecttest

import (
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlite"
)

// TestRunOnSQLite runs the conformance suite on a temporary SQLite file,
// on the ShedLock preset (the checks package covers every preset).
func TestRunOnSQLite(t *testing.T) {
	sqlDB, err := sql.Open(sqlite.DriverName, sqlite.DSN(filepath.Join(t.TempDir(), "conformance.db")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sqlDB.Close() })
	db, err := sqlite.New(t.Context(), sqlDB, nil)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	table := dialects.Table{Preset: dialects.PresetShedlock, Name: checks.NewPrefix() + "_shedlock"}
	Run(t, db, Options{Tables: []dialects.Table{table}})

	l, err := db.TableLocker(table)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.Inspect(t.Context(), "any"); !errors.Is(err, dialects.ErrNoTable) {
		t.Errorf("table %s after the run: Inspect = %v; want ErrNoTable (dropped)", table.Name, err)
	}
}
