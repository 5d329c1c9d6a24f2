package locktabletest

import (
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// CheckRowDeletingRelease proves, through tl (a sys_sched_lock table that
// exists), the statements of a table whose release deletes the row: a
// release deletes it at once; an early release keeps it, live, until
// at-least has passed and the locker deletes it then; a release by
// another owner deletes nothing; a forced unlock (Expire) deletes a live
// row and reports a missing one.
func CheckRowDeletingRelease(t *testing.T, tl dialects.TableLocker) {
	t.Helper()
	ctx := t.Context()
	row := func(name string) (dialects.Row, bool) {
		t.Helper()
		r, found, err := tl.Inspect(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return r, found
	}
	acquire := func(name string, opts dialects.Options) dialects.Lease {
		t.Helper()
		lease, err := tl.Acquire(ctx, name, opts)
		if err != nil {
			t.Fatalf("acquire %q: %v", name, err)
		}
		return lease
	}
	lease := acquire("at-once", dialects.Options{Owner: "a"})
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if r, found := row("at-once"); found {
		t.Fatalf("row %+v right after the release; want it deleted at once", r)
	}

	lease = acquire("kept", dialects.Options{Owner: "a", AtMost: time.Minute, AtLeast: 2 * time.Second})
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if r, found := row("kept"); !found || r.Expired() {
		t.Fatalf("row right after an early release = %+v, %v; want it kept, live", r, found)
	}
	select {
	case <-dialects.Freed(lease):
	case <-time.After(time.Minute):
		t.Fatal("the kept row's deletion did not finish")
	}
	if r, found := row("kept"); found {
		t.Fatalf("row %+v once at-least has passed; want it deleted", r)
	}

	acquire("theirs", dialects.Options{Owner: "a"})
	other, err := tl.Handle("theirs", "intruder", 0, dialects.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Release(ctx); err == nil {
		t.Fatal("a release by another owner succeeded")
	}
	if _, found := row("theirs"); !found {
		t.Fatal("a release by another owner deleted the row")
	}
	exp := tl
	if done, err := exp.Expire(ctx, "theirs"); err != nil || !done {
		t.Fatalf("forced unlock = %v, %v; want the row deleted", done, err)
	}
	if _, found := row("theirs"); found {
		t.Fatal("the forced unlock left the row")
	}
	if done, err := exp.Expire(ctx, "theirs"); err != nil || done {
		t.Fatalf("forced unlock of a missing row = %v, %v; want false", done, err)
	}
}
