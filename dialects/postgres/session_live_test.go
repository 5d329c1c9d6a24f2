package postgres

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// The pool trap: a lock taken on connection A cannot be released from
// connection B, and A keeps it.
func TestSessionOpsPoolTrap(t *testing.T) {
	db := liveDB(t)
	ctx := testCtx(t)
	a, b := conn(t, db), conn(t, db)
	ops := SessionOps{}
	name := unique("trap-")

	mustBool(t, "TryLock on A", true)(ops.TryLock(ctx, a, name))
	mustBool(t, "Unlock on B", false)(ops.Unlock(ctx, b, name))
	mustBool(t, "Holds on A after B's unlock", true)(ops.Holds(ctx, a, name))
	mustBool(t, "Holds on B", false)(ops.Holds(ctx, b, name))
	mustBool(t, "TryLock on B while A holds", false)(ops.TryLock(ctx, b, name))
	mustBool(t, "Holds on A of another name", false)(ops.Holds(ctx, a, name+"-other"))

	mustBool(t, "Unlock on A", true)(ops.Unlock(ctx, a, name))
	mustBool(t, "Holds on A after unlock", false)(ops.Holds(ctx, a, name))
	mustBool(t, "TryLock on B after A's unlock", true)(ops.TryLock(ctx, b, name))
	mustBool(t, "Unlock on B", true)(ops.Unlock(ctx, b, name))
	mustBool(t, "second Unlock on B", false)(ops.Unlock(ctx, b, name))
}

// Holds reads the key exactly as pg_locks shows a bigint advisory lock.
func TestSessionOpsHoldsMatchesPgLocks(t *testing.T) {
	db := liveDB(t)
	ctx := testCtx(t)
	a := conn(t, db)
	name := unique("parts-")
	mustBool(t, "TryLock", true)(SessionOps{}.TryLock(ctx, a, name))
	var classid, objid uint32
	err := a.QueryRowContext(ctx, `SELECT classid::bigint, objid::bigint FROM pg_locks
		WHERE locktype = 'advisory' AND objsubid = 1 AND pid = pg_backend_pid()`).Scan(&classid, &objid)
	if err != nil {
		t.Fatal(err)
	}
	if got := KeyFromParts(classid, objid); got != Key(name) {
		t.Errorf("pg_locks shows key %d (classid %d, objid %d), want %d", got, classid, objid, Key(name))
	}
}

func TestSessionOpsHolder(t *testing.T) {
	db := liveDB(t)
	ctx := testCtx(t)
	a := conn(t, db)
	ops := SessionOps{}
	name := unique("holder-")

	if h, err := holderOf(ctx, db, name); err != nil || h != "" {
		t.Fatalf("Holder of a free lock = %q, %v; want empty", h, err)
	}
	mustBool(t, "TryLock", true)(ops.TryLock(ctx, a, name))
	h, err := holderOf(ctx, db, name)
	if err != nil {
		t.Fatal(err)
	}
	if want := strconv.FormatInt(backendPID(t, a), 10); h != want {
		t.Errorf("Holder = %q, want pid %s", h, want)
	}
	mustBool(t, "Unlock", true)(ops.Unlock(ctx, a, name))
	if h, err := holderOf(ctx, db, name); err != nil || h != "" {
		t.Errorf("Holder after unlock = %q, %v; want empty", h, err)
	}
}

func TestSessionLockerLive(t *testing.T) {
	db := liveDB(t)
	ctx := testCtx(t)
	locker, err := backendFor(db, dialects.Info{Product: dialects.ProductPostgreSQL}, nil).NewSessionLocker(dialects.SessionNames{})
	if err != nil {
		t.Fatal(err)
	}
	name := unique("locker-")
	lease, err := locker.Acquire(ctx, name, dialects.Options{Owner: "first"})
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if tok, ok := lease.Token(); ok || tok != 0 {
		t.Errorf("Token = %d, %v; advisory locks have none", tok, ok)
	}
	holder, err := holderOf(ctx, db, name)
	if err != nil || holder == "" {
		t.Fatalf("Holder = %q, %v; want the lease's backend", holder, err)
	}

	// A refusal is one round trip: the holder is looked up on request.
	_, err = locker.Acquire(ctx, name, dialects.Options{Owner: "second"})
	var held *dialects.HeldError
	if !errors.As(err, &held) || held.Holder != "" {
		t.Fatalf("second Acquire = %v; want a HeldError naming no holder", err)
	}

	start := time.Now()
	_, err = locker.Acquire(ctx, name, dialects.Options{Wait: 300 * time.Millisecond, RetryEvery: 50 * time.Millisecond})
	if !errors.Is(err, dialects.ErrHeld) || time.Since(start) < 250*time.Millisecond {
		t.Errorf("Acquire with Wait = %v after %s; want ErrHeld after about 300ms", err, time.Since(start))
	}

	if err := lease.Refresh(ctx); err != nil {
		t.Errorf("Refresh of a held lock: %v", err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := lease.Release(ctx); !errors.Is(err, dialects.ErrLeaseLost) {
		t.Errorf("second Release = %v, want ErrLeaseLost", err)
	}
	if h, _ := holderOf(ctx, db, name); h != "" {
		t.Errorf("backend %s still holds the lock after Release", h)
	}
	again, err := locker.Acquire(ctx, name, dialects.Options{})
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	if err := again.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// mustBool checks a (bool, error) result.
func mustBool(t *testing.T, what string, want bool) func(bool, error) {
	t.Helper()
	return func(got bool, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got != want {
			t.Fatalf("%s = %v, want %v", what, got, want)
		}
	}
}
