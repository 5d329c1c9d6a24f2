package locktable_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
	"github.com/schedlock/schedlock/dialects/sqlite"
)

// openDB opens a fresh SQLite file in a temporary directory.
func openDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open(sqlite.DriverName, sqlite.DSN(filepath.Join(t.TempDir(), "locks.db")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// newLocker returns a Locker on a fresh file whose table exists.
func newLocker(t *testing.T, table dialects.Table) *locktable.Locker {
	t.Helper()
	return newLockerWith(t, openDB(t), sqlite.Builder{}, table)
}

func newLockerWith(t *testing.T, db *sql.DB, b locktable.Builder, table dialects.Table) *locktable.Locker {
	t.Helper()
	l, err := locktable.New(db, b, table)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	if err := l.CreateTable(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	return l
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustAcquire(t *testing.T, l dialects.Locker, name string, opts dialects.Options) dialects.Lease {
	t.Helper()
	lease, err := l.Acquire(ctxT(t), name, opts)
	if err != nil {
		t.Fatalf("acquire %q as %q: %v", name, opts.Owner, err)
	}
	return lease
}

func mustInspect(t *testing.T, l *locktable.Locker, name string) dialects.Row {
	t.Helper()
	row, found, err := l.Inspect(ctxT(t), name)
	if err != nil {
		t.Fatalf("inspect %q: %v", name, err)
	}
	if !found {
		t.Fatalf("inspect %q: no row", name)
	}
	return row
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want one matching %v", err, target)
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// waitClosed waits up to limit for ch to close.
func waitClosed(t *testing.T, ch <-chan struct{}, limit time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(limit):
		t.Fatalf("%s: not closed within %s", what, limit)
	}
}
