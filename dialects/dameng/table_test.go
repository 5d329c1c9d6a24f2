package dameng

import (
	"errors"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

// TestCreateTableSimulated: a missing table is a *dialects.MissingTableError
// carrying the CREATE statement; CreateTable creates it, and a second
// CreateTable (which the server refuses: the table exists) succeeds; the
// lock tables are then found; DropTable drops it, twice without error.
func TestCreateTableSimulated(t *testing.T) {
	sim, db := openSim(t, configDM8())
	ctx := testCtx(t)
	tl, err := db.TableLocker(dialects.Table{Preset: dialects.PresetShedlock})
	if err != nil {
		t.Fatal(err)
	}
	_, err = tl.Acquire(ctx, "job", dialects.Options{})
	var missing *dialects.MissingTableError
	if !errors.As(err, &missing) || !strings.HasPrefix(missing.CreateSQL, "CREATE TABLE shedlock") {
		t.Fatalf("acquire on a missing table: %v; want a *dialects.MissingTableError", err)
	}
	if err := tl.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tl.CreateTable(ctx); err != nil {
		t.Fatalf("CreateTable of an existing table: %v", err)
	}
	tables, err := db.LockTables(ctx)
	if err != nil || len(tables) != 1 || tables[0].Preset != dialects.PresetShedlock {
		t.Fatalf("LockTables = %+v, %v; want the shedlock table", tables, err)
	}
	cols, err := db.TableColumns(ctx, tables[0])
	if err != nil || dialects.CheckColumns("shedlock", dialects.PresetShedlock, cols) != nil {
		t.Errorf("TableColumns = %v, %v", cols, err)
	}
	lease, err := tl.Acquire(ctx, "job", dialects.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	dropper := tl.(dialects.TableDropper)
	if err := dropper.DropTable(ctx); err != nil {
		t.Fatal(err)
	}
	if err := dropper.DropTable(ctx); err != nil {
		t.Fatalf("dropping a dropped table: %v", err)
	}
	sim.AssertUnderstood(t)
}

// TestCreateTableKeepsRealErrors: CreateTable reports a refusal when the
// table does not exist afterwards.
func TestCreateTableKeepsRealErrors(t *testing.T) {
	cfg := configDM8()
	cfg.Tables = []dialects.Table{} // the server knows no table statement
	sim := newSim(t, cfg)
	db, _ := sim.Open(t)
	tl, err := NewTableLocker(db, dialects.Info{}, dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.CreateTable(testCtx(t)); err == nil {
		t.Fatal("CreateTable succeeded though the server refused and no table exists")
	}
}
