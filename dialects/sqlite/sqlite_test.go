package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlite"
)

func openFile(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open(sqlite.DriverName, sqlite.DSN(filepath.Join(t.TempDir(), "locks.db")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestRegisteredDialect(t *testing.T) {
	ctx := context.Background()
	for _, scheme := range []string{"sqlite3", "sqlite", "moderncsqlite", "file"} {
		d, _, err := dialects.ForScheme(scheme)
		if err != nil || d.Name != sqlite.Name || d.Open == nil {
			t.Fatalf("ForScheme(%q) = %v, %v", scheme, d, err)
		}
	}
	db, err := sqlite.New(ctx, openFile(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if db.Info.Dialect != "sqlite" || db.Info.Product != dialects.ProductSQLite ||
		!regexp.MustCompile(`^3\.\d+\.\d+$`).MatchString(db.Info.Version) || db.Info.Banner != db.Info.Version {
		t.Fatalf("info = %+v", db.Info)
	}
	var direct string
	if err := db.SQL.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&direct); err != nil || direct != db.Info.Version {
		t.Fatalf("version %q, sqlite_version() %q, %v", db.Info.Version, direct, err)
	}

	if st, why := db.Recommend(); st != dialects.StrategyTable || why == "" {
		t.Fatalf("recommend = %s, %q", st, why)
	}
	_, err = db.SessionLocker()
	if !errors.Is(err, dialects.ErrUnsupported) {
		t.Fatalf("session locker error = %v, want ErrUnsupported", err)
	}
	locker, err := db.Locker(dialects.StrategyTable, dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	if locker.Strategy() != dialects.StrategyTable {
		t.Fatalf("strategy = %s", locker.Strategy())
	}
	tl := locker.(dialects.TableLocker)
	if err := tl.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	lease, err := tl.Acquire(ctx, "registered", dialects.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestStoredTimeFormat checks what the table holds: UTC text with
// milliseconds, the same instants Inspect reports, on the database clock.
func TestStoredTimeFormat(t *testing.T) {
	ctx := context.Background()
	db := openFile(t)
	l, err := sqlite.NewTableLocker(db, dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	before := time.Now().UTC().Truncate(time.Millisecond)
	lease, err := l.Acquire(ctx, "fmt", dialects.Options{AtMost: 90 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now().UTC()
	var lockedAt, until string
	if err := db.QueryRowContext(ctx, "SELECT locked_at, lock_until FROM schedlock WHERE name = 'fmt'").Scan(&lockedAt, &until); err != nil {
		t.Fatal(err)
	}
	const layout = "2006-01-02 15:04:05.000"
	format := regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$`)
	if !format.MatchString(lockedAt) || !format.MatchString(until) {
		t.Fatalf("stored times %q, %q, want %s", lockedAt, until, layout)
	}
	la, _ := time.Parse(layout, lockedAt)
	lu, _ := time.Parse(layout, until)
	if la.Before(before) || la.After(after) {
		t.Fatalf("locked_at %s not within the acquire [%s, %s]: not UTC now?", la, before, after)
	}
	if lu.Sub(la) != 90*time.Second {
		t.Fatalf("until - locked_at = %s, want 90s", lu.Sub(la))
	}
	row, found, err := l.Inspect(ctx, "fmt")
	if err != nil || !found {
		t.Fatal(found, err)
	}
	if !row.LockedAt.Equal(la) || !row.Until.Equal(lu) {
		t.Fatalf("inspect %s..%s, stored %s..%s", row.LockedAt, row.Until, la, lu)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
