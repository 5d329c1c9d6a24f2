package lock

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/livetest"
)

// The adapters between this package's Locker and the engine's unwrap
// rather than stack: a locker carried across and back is itself, and a
// lease taken through a namespace on a *DB is still the handle's to
// release on Close.
func TestLockerAdapters(t *testing.T) {
	ctx := t.Context()
	db := openT(t, "sqlite:"+filepath.Join(t.TempDir(), "locks.db")+"?x-create-file=true&x-strategy=table")
	if err := db.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	if got := userLocker(engineLocker(db)); got != Locker(db) {
		t.Errorf("db carried to the engine and back is %T, want db", got)
	}
	eng := dialects.WithNamespace(engineLocker(db), "prod")
	if got := engineLocker(userLocker(eng)); got != eng {
		t.Errorf("an engine locker carried here and back is %T, want itself", got)
	}

	lease, err := WithNamespace(db, "prod").Acquire(ctx, "nightly", Options{AtMost: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if n := db.tracked(); n != 1 {
		t.Errorf("the handle tracks %d leases, want the namespaced one", n)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if n := db.tracked(); n != 0 {
		t.Errorf("the handle tracks %d leases after the release, want 0", n)
	}
}

// A session lease released before its AtLeast lingers on its connection;
// dialects.Freed sees that through the handle's tracked lease (the
// backend's lease is what it unwraps to), and Close frees it.
func TestFreedSeesThroughTrackedLeases(t *testing.T) {
	ctx := t.Context()
	db := openT(t, withOption(livetest.DSN(t, livetest.Postgres), "x-strategy=session"))
	lease, err := WithNamespace(db, "prod").Acquire(ctx, "freed-"+NewOwner(), Options{AtMost: 2 * time.Hour, AtLeast: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	freed := dialects.Freed(lease)
	select {
	case <-freed:
		t.Fatal("Freed is closed right after a release an hour before AtLeast: it did not reach the session lease")
	default:
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-freed:
	case <-time.After(30 * time.Second):
		t.Fatal("Freed still open 30s after Close")
	}
}
