package zookeeper

import (
	"context"
	"testing"
	"time"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
)

// A node created while the last holder's at-least still ran, and judged
// only after it ended, gets the lock with a locked-at on the server clock
// no earlier than that end: its creation time, before the end, would
// make the next holder look as if it had the lock within the at-least.
func TestLockedAtAfterAnAtLeastIsNotBeforeItsEnd(t *testing.T) {
	ctx, l := liveTable(t)
	const atLeast = 500 * time.Millisecond
	first, err := l.Acquire(ctx, "nightly", dialects.Options{Owner: "first", AtMost: time.Minute, AtLeast: atLeast})
	if err != nil {
		t.Fatal(err)
	}
	firstRow, _, err := l.Inspect(ctx, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	opts, err := dialects.Options{Owner: "next", AtMost: time.Minute}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	a := &attempt{l: l, name: "nightly", opts: opts, dir: l.NamePath("nightly"),
		data: holderData{Tool: toolName, Owner: opts.Owner, AtMost: opts.AtMost.Milliseconds()}}
	if err := a.create(ctx); err != nil { // within the at-least: the lowest node, not yet the holder
		t.Fatal(err)
	}
	defer a.dropNode()
	time.Sleep(atLeast + 200*time.Millisecond)
	held, _, err := a.judge(ctx)
	if err != nil || held != nil {
		t.Fatalf("judge after the at-least ended: refused %v, %v", held, err)
	}
	next, err := a.grant(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Release(context.Background())
	row, _, err := l.Inspect(ctx, "nightly")
	if err != nil {
		t.Fatal(err)
	}
	if end := firstRow.LockedAt.Add(atLeast); row.LockedAt.Before(end) {
		t.Fatalf("the next holder's locked-at %s is before the last one's at-least end %s", row.LockedAt.Format(time.StampMilli), end.Format(time.StampMilli))
	}
}

// liveTable gives a live test a lock table of its own, dropped when the
// test ends.
func liveTable(t *testing.T) (context.Context, *Locker) {
	t.Helper()
	ctx, b := liveBackend(t)
	tl, err := b.LeaseLocker(dialects.Table{Name: checks.NewPrefix()})
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.(dialects.TableCreator).CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tl.(dialects.TableDropper).DropTable(context.Background()) })
	return ctx, tl.(*Locker)
}
