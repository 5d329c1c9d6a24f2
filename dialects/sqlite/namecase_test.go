package sqlite_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
	"github.com/schedlock/schedlock/dialects/sqlite"
)

// TestNameCase: SQLite compares a name column with BINARY unless it is
// declared otherwise. On tables schedlock creates Nightly and nightly are
// two locks; on a table whose name column is declared COLLATE NOCASE they
// are one, and names.case says so with the collation and how to fix it.
func TestNameCase(t *testing.T) {
	sqlDB := openDB(t, filepath.Join(t.TempDir(), "case.db"))
	if _, err := sqlDB.Exec(`CREATE TABLE nocase_locks (name VARCHAR(64) COLLATE NOCASE NOT NULL PRIMARY KEY, lock_until TEXT NOT NULL, locked_at TEXT NOT NULL, locked_by VARCHAR(255) NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.New(t.Context(), sqlDB, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := dialecttest.Results(t, db, dialecttest.Options{Strategies: []dialects.Strategy{dialects.StrategyTable}, Tables: []dialects.Table{{Preset: dialects.PresetShedlock, Name: "nocase_locks"}}}, "table.names.case")["table.names.case"]
	if c.Status != checks.StatusFail || !strings.Contains(c.Detail, "collation NOCASE") || !strings.Contains(c.Remedy, "COLLATE BINARY") {
		t.Errorf("names.case on NOCASE = %+v; want a failure naming NOCASE and the way to BINARY", c)
	}
	var tables []dialects.Table
	for _, p := range dialects.Presets() {
		tables = append(tables, dialects.Table{Preset: p, Name: "case_" + p})
	}
	res := dialecttest.Results(t, db, dialecttest.Options{Strategies: []dialects.Strategy{dialects.StrategyTable}, Tables: tables}, "table.schedlock.names.case", "table.shedlock.names.case", "table.sys_sched_lock.names.case")
	if len(res) != 3 {
		t.Fatalf("results %+v", res)
	}
	for id, r := range res {
		if r.Status != checks.StatusPass || !strings.Contains(r.Detail, "two locks") || !strings.Contains(r.Detail, "collation BINARY") {
			t.Errorf("%s = %+v; want two locks under BINARY", id, r)
		}
	}
}
