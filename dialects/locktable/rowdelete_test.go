package locktable_test

import (
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
	"github.com/schedlock/schedlock/dialects/sqlite"
)

// articleInsert is how an application that locks sys_sched_lock by INSERT
// takes a lock: a plain INSERT, a duplicate key meaning held. It reports
// whether the INSERT went in.
func articleInsert(t *testing.T, db *sql.DB, name, owner string) bool {
	t.Helper()
	now := time.Now().UTC()
	_, err := db.ExecContext(ctxT(t), "INSERT INTO sys_sched_lock (lock_name, lock_owner, acquire_time, expire_time) VALUES (?, ?, ?, ?)",
		name, owner, now.Format("2006-01-02 15:04:05.000"), now.Add(time.Minute).Format("2006-01-02 15:04:05.000"))
	switch {
	case err == nil:
		return true
	case strings.Contains(err.Error(), "UNIQUE constraint failed"):
		return false
	}
	t.Fatalf("article INSERT: %v", err)
	return false
}

// articleDelete is that application's unlock: DELETE … WHERE lock_name = ?
// AND lock_owner = ?.
func articleDelete(t *testing.T, db *sql.DB, name, owner string) int64 {
	t.Helper()
	res, err := db.ExecContext(ctxT(t), "DELETE FROM sys_sched_lock WHERE lock_name = ? AND lock_owner = ?", name, owner)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := res.RowsAffected()
	return n
}

func sysSchedLock(t *testing.T) (*locktable.Locker, *sql.DB) {
	t.Helper()
	db := openDB(t)
	return newLockerWith(t, db, sqlite.Builder{}, dialects.Table{Preset: dialects.PresetSysSchedLock}), db
}

func rowCount(t *testing.T, db *sql.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(ctxT(t), "SELECT count(*) FROM sys_sched_lock").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSysSchedLockReleaseDeletesRow: a release deletes the row, so the
// INSERT of an application that locks by INSERT goes in at once; that
// application's row refuses schedlock until its owner-checked DELETE.
func TestSysSchedLockReleaseDeletesRow(t *testing.T) {
	l, db := sysSchedLock(t)
	ctx := ctxT(t)
	lease := mustAcquire(t, l, "nightly", dialects.Options{Owner: "schedlock-a"})
	if articleInsert(t, db, "nightly", "app-1") {
		t.Fatal("the other application's INSERT went in while schedlock holds the lock")
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if n := rowCount(t, db); n != 0 {
		t.Fatalf("%d rows after the release; want the row deleted", n)
	}
	if !isClosed(dialects.Freed(lease)) {
		t.Error("Freed is open after a release that deleted the row")
	}
	if !articleInsert(t, db, "nightly", "app-1") {
		t.Fatal("the other application's INSERT was refused after schedlock released")
	}
	_, err := l.Acquire(ctx, "nightly", dialects.Options{Owner: "schedlock-b"})
	wantErr(t, err, dialects.ErrHeld)
	if articleDelete(t, db, "nightly", "app-1") != 1 {
		t.Fatal("the other application's DELETE missed its row")
	}
	mustAcquire(t, l, "nightly", dialects.Options{Owner: "schedlock-b"})
	if st := l.Stats(); st.Release != 1 {
		t.Errorf("the release sent %d statements; want 1", st.Release)
	}
}

// TestSysSchedLockAtLeastKeepsRowThenDeletes: an early release keeps the
// row until locked-at + at-least, then the locker deletes it.
func TestSysSchedLockAtLeastKeepsRowThenDeletes(t *testing.T) {
	l, db := sysSchedLock(t)
	ctx := ctxT(t)
	lease := mustAcquire(t, l, "short", dialects.Options{Owner: "schedlock-a", AtMost: time.Minute, AtLeast: 400 * time.Millisecond})
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	swept := dialects.Freed(lease)
	row, found, err := l.Inspect(ctx, "short")
	// The row stays until at-least has passed, unless this machine was so
	// slow that it has already passed and been deleted.
	if err != nil || (!found && !isClosed(swept)) {
		t.Fatalf("inspect after an early release = %+v, %v, %v", row, found, err)
	}
	if found && !isClosed(swept) && !row.Expired() {
		if articleInsert(t, db, "short", "app-1") {
			t.Fatal("the other application's INSERT went in before at-least had passed")
		}
	}
	select {
	case <-swept:
	case <-time.After(20 * time.Second):
		t.Fatal("the kept row was not deleted after at-least")
	}
	if n := rowCount(t, db); n != 0 {
		t.Fatalf("%d rows once at-least has passed; want none", n)
	}
	if !articleInsert(t, db, "short", "app-1") {
		t.Fatal("the other application's INSERT was refused after at-least")
	}
}

// TestSysSchedLockLostLeaseDeletesOwnExpiredRow: a release after the
// lease expired reports the loss, and then deletes the expired row nobody
// took over, so the other application is not refused by it.
func TestSysSchedLockLostLeaseDeletesOwnExpiredRow(t *testing.T) {
	l, db := sysSchedLock(t)
	ctx := ctxT(t)
	lease := mustAcquire(t, l, "lost", dialects.Options{Owner: "schedlock-a", AtMost: 100 * time.Millisecond})
	deadline := time.Now().Add(20 * time.Second)
	for row := mustInspect(t, l, "lost"); !row.Expired(); row = mustInspect(t, l, "lost") {
		if time.Now().After(deadline) {
			t.Fatal("the lease never expired")
		}
		time.Sleep(20 * time.Millisecond)
	}
	wantErr(t, lease.Release(ctx), dialects.ErrLeaseLost)
	select {
	case <-dialects.Freed(lease):
	case <-time.After(20 * time.Second):
		t.Fatal("the lost lease's row was not swept")
	}
	if n := rowCount(t, db); n != 0 {
		t.Fatalf("%d rows after the lost lease's release; want its expired row deleted", n)
	}
}

// TestSysSchedLockForcedUnlockDeletes: Expire (unlock --force) deletes the
// row, live or expired, whoever holds it, and reports whether there was
// one.
func TestSysSchedLockForcedUnlockDeletes(t *testing.T) {
	l, db := sysSchedLock(t)
	ctx := ctxT(t)
	mustAcquire(t, l, "live", dialects.Options{Owner: "schedlock-a"})
	if !articleInsert(t, db, "theirs", "app-1") {
		t.Fatal("article INSERT refused")
	}
	// An expired row another application left (it crashed).
	if _, err := db.ExecContext(ctx, "UPDATE sys_sched_lock SET expire_time = '2000-01-01 00:00:00.000' WHERE lock_name = 'theirs'"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"live", "theirs"} {
		done, err := l.Expire(ctx, name)
		if err != nil || !done {
			t.Fatalf("Expire(%q) = %v, %v; want the row deleted", name, done, err)
		}
	}
	if n := rowCount(t, db); n != 0 {
		t.Fatalf("%d rows after the forced unlocks; want none", n)
	}
	if done, err := l.Expire(ctx, "live"); err != nil || done {
		t.Fatalf("Expire of a name without a row = %v, %v; want false", done, err)
	}
}

// TestSysSchedLockWrongOwnerChangesNothing: a release by another owner is
// refused and deletes nothing.
func TestSysSchedLockWrongOwnerChangesNothing(t *testing.T) {
	l, db := sysSchedLock(t)
	ctx := ctxT(t)
	mustAcquire(t, l, "job", dialects.Options{Owner: "schedlock-a"})
	h, err := l.Handle("job", "intruder", 0, dialects.Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, h.Release(ctx), dialects.ErrNotOwner)
	if n := rowCount(t, db); n != 1 {
		t.Fatalf("%d rows after a refused release; want the holder's row", n)
	}
}

// TestSysSchedLockCloseLeavesKeptRow: a Locker closed before at-least has
// passed stops the deletion; the expired row stays until the next acquire
// takes it over, and Freed is closed (nothing more will be done).
func TestSysSchedLockCloseLeavesKeptRow(t *testing.T) {
	db := openDB(t)
	l, err := locktable.New(db, sqlite.Builder{}, dialects.Table{Preset: dialects.PresetSysSchedLock})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	if err := l.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	lease := mustAcquire(t, l, "kept", dialects.Options{Owner: "a", AtMost: 2 * time.Hour, AtLeast: time.Hour})
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if !isClosed(dialects.Freed(lease)) {
		t.Error("Freed is open after the Locker was closed")
	}
	if n := rowCount(t, db); n != 1 {
		t.Fatalf("%d rows; want the kept row", n)
	}
	other, err := locktable.New(db, sqlite.Builder{}, dialects.Table{Preset: dialects.PresetSysSchedLock})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, err = other.Acquire(ctx, "kept", dialects.Options{Owner: "b"})
	if !errors.Is(err, dialects.ErrHeld) {
		t.Fatalf("acquire within at-least = %v; want held", err)
	}
}
