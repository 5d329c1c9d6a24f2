package benchkit

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/claimtable"
	"github.com/schedlock/schedlock/dialects/sqlite"
)

// testFiller is a filler of a task table on a SQLite file, need rows at
// first.
func testFiller(t *testing.T, need int) (*filler, *sql.DB, string) {
	t.Helper()
	sqlDB, err := sql.Open(sqlite.DriverName, sqlite.DSN(filepath.Join(t.TempDir(), "fill.db")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sqlDB.Close() })
	db, err := sqlite.New(t.Context(), sqlDB, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := claimtable.BuilderOf(db)
	cl, err := claimtable.New(sqlDB, b, claimtable.Table{Name: "fill_tasks"}, dialects.ClaimOptimistic, claimtable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.CreateTable(t.Context()); err != nil {
		t.Fatal(err)
	}
	return &filler{cl: cl, need: need}, sqlDB, "fill_tasks"
}

// TestFillerRepeatsSlicesThatRanLow: a slice of completed rows that used
// more than half the rows ready at its start is run again on a table
// filled to four times what it used, and the rows ready at the start of a
// slice never go down; a slice within half counts at once; after
// lowRepeats repeats a low slice counts and is noted; a claim alone is
// never repeated.
func TestFillerRepeatsSlicesThatRanLow(t *testing.T) {
	f, sqlDB, table := testFiller(t, 100)
	var starts []int
	runs := func(used ...int) func() (ClaimRate, error) {
		i := 0
		return func() (ClaimRate, error) {
			starts = append(starts, f.ready)
			n := used[min(i, len(used)-1)]
			i++
			return ClaimRate{Rows: int64(n), Claims: 1}, nil
		}
	}
	rate, _, err := f.slice(context.Background(), true, runs(90, 150))
	if err != nil {
		t.Fatal(err)
	}
	if rate.Rows != 150 || len(starts) != 2 || starts[0] != 100 || starts[1] != 360 || f.mostPerSlice != 150 || f.low != 0 {
		t.Fatalf("counted %d rows after starts %v (most %d, low %d); want 150 after [100 360]", rate.Rows, starts, f.mostPerSlice, f.low)
	}
	starts = nil
	if _, _, err := f.slice(context.Background(), true, runs(100)); err != nil {
		t.Fatal(err)
	}
	if len(starts) != 1 || starts[0] != 360 {
		t.Fatalf("a slice within half ran at %v; want once at 360 ready rows (never fewer than before)", starts)
	}
	starts = nil
	if _, _, err := f.slice(context.Background(), false, runs(1000)); err != nil {
		t.Fatal(err)
	}
	if len(starts) != 1 || f.low != 0 {
		t.Fatalf("a claim alone ran %d times (low %d); want once", len(starts), f.low)
	}
	var n int
	if err := sqlDB.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil || n != f.added || n != 700 {
		t.Fatalf("the table holds %d rows (%v); the filler added %d, want 700", n, err, f.added)
	}
	f, _, _ = testFiller(t, 10)
	starts = nil
	if _, _, err := f.slice(context.Background(), true, func() (ClaimRate, error) {
		starts = append(starts, f.ready)
		return ClaimRate{Rows: int64(f.ready), Claims: 1}, nil // always dry
	}); err != nil {
		t.Fatal(err)
	}
	if len(starts) != lowRepeats+1 || f.low != 1 {
		t.Fatalf("a slice always dry ran %d times (low %d); want %d, noted once", len(starts), f.low, lowRepeats+1)
	}
}
