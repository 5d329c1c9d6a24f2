package postgres

import (
	"testing"
	"time"
)

// TestBlockingWaitRestoresLockTimeout proves the server-side wait: it
// gives up after about its timeout while another session holds the key,
// it gets the key as soon as that session frees it, and in both cases the
// session's lock_timeout is what it was before.
func TestBlockingWaitRestoresLockTimeout(t *testing.T) {
	db := liveDB(t)
	ctx := testCtx(t)
	holder, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	waiter, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer waiter.Close()
	lockTimeout := func() string {
		t.Helper()
		var v string
		if err := waiter.QueryRowContext(ctx, "SHOW lock_timeout").Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	before := lockTimeout()
	ops := SessionOps{}
	name := unique("wait-")
	mustBool(t, "TryLock by the holder", true)(ops.TryLock(ctx, holder, name))

	start := time.Now()
	mustBool(t, "Lock while held", false)(ops.Lock(ctx, waiter, name, 200*time.Millisecond))
	if took := time.Since(start); took < 150*time.Millisecond || took > 5*time.Second {
		t.Errorf("a refused wait of 200ms took %s", took)
	}
	if got := lockTimeout(); got != before {
		t.Errorf("lock_timeout after a timed-out wait = %q, want %q", got, before)
	}

	go func() {
		time.Sleep(200 * time.Millisecond)
		_, _ = ops.Unlock(ctx, holder, name)
	}()
	mustBool(t, "Lock freed during the wait", true)(ops.Lock(ctx, waiter, name, 10*time.Second))
	if got := lockTimeout(); got != before {
		t.Errorf("lock_timeout after a granted wait = %q, want %q", got, before)
	}
	mustBool(t, "waiter holds it", true)(ops.Holds(ctx, waiter, name))
	mustBool(t, "Unlock by the waiter", true)(ops.Unlock(ctx, waiter, name))
}
