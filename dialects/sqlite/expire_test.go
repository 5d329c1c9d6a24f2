package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable/locktabletest"
	"github.com/schedlock/schedlock/dialects/sqlite"
)

// TestExpire runs a forced unlock on SQLite itself, on every preset
// table and on ShedLock's table in a writer time zone: Expire ends a live
// lease and reports an ended one (locktabletest.CheckExpire), so an
// Expire whose lease-end condition means the opposite fails here.
func TestExpire(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "expire.db"))
	tables := []dialects.Table{{Preset: dialects.PresetShedlock, Name: "shedlock_new_york", TimeZone: "America/New_York"}}
	for _, p := range dialects.Presets() {
		tables = append(tables, dialects.Table{Preset: p})
	}
	for _, table := range tables {
		name := table.Preset
		if table.Name != "" {
			name = table.Name
		}
		t.Run(name, func(t *testing.T) {
			tl, err := sqlite.NewTableLocker(db, table)
			if err != nil {
				t.Fatal(err)
			}
			if err := tl.CreateTable(t.Context()); err != nil {
				t.Fatal(err)
			}
			locktabletest.CheckExpire(t, tl)
		})
	}
}
