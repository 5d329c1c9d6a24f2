package locktable_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

func TestAcquireContendRelease(t *testing.T) {
	l := newLocker(t, dialects.Table{})
	ctx := ctxT(t)

	before := time.Now()
	a := mustAcquire(t, l, "nightly", dialects.Options{Owner: "a", AtMost: time.Minute})
	if tok, ok := a.Token(); !ok || tok != 1 {
		t.Fatalf("first token = %d, %v; want 1, true", tok, ok)
	}
	if a.Name() != "nightly" || a.Owner() != "a" {
		t.Fatalf("lease name/owner = %q/%q", a.Name(), a.Owner())
	}
	row := mustInspect(t, l, "nightly")
	if row.Owner != "a" || row.Token != 1 || !row.HasToken || row.Expired() {
		t.Fatalf("row after acquire = %+v", row)
	}
	// Until is conservative: from before the statement, never after the
	// row's own lease end (same clock here; SQLite's now has ms precision).
	if u := a.Until(); u.Before(before.Add(time.Minute)) || u.After(row.Until.Add(time.Millisecond)) {
		t.Fatalf("Until = %s, want within [%s, %s]", u, before.Add(time.Minute), row.Until)
	}
	if got := row.Until.Sub(row.LockedAt); got != time.Minute {
		t.Fatalf("row lease = %s, want 1m", got)
	}

	_, err := l.Acquire(ctx, "nightly", dialects.Options{Owner: "b"})
	wantErr(t, err, dialects.ErrHeld)
	var held *dialects.HeldError
	if !errors.As(err, &held) || held.Holder != "a" || !held.Until.Equal(row.Until) || held.Name != "nightly" {
		t.Fatalf("held error = %#v, want holder a until %s", held, row.Until)
	}
	// The same owner does not re-enter either.
	_, err = l.Acquire(ctx, "nightly", dialects.Options{Owner: "a"})
	wantErr(t, err, dialects.ErrHeld)

	// Another name is independent.
	other := mustAcquire(t, l, "hourly", dialects.Options{Owner: "b"})
	if err := other.Release(ctx); err != nil {
		t.Fatal(err)
	}

	if err := a.Release(ctx); err != nil {
		t.Fatalf("release: %v", err)
	}
	if !isClosed(a.Done()) || a.Err() != nil {
		t.Fatalf("after release: done=%v err=%v", isClosed(a.Done()), a.Err())
	}
	if row := mustInspect(t, l, "nightly"); !row.Expired() || row.Owner != "a" {
		t.Fatalf("row after release = %+v, want expired, owner kept", row)
	}
	b := mustAcquire(t, l, "nightly", dialects.Options{Owner: "b"})
	if tok, _ := b.Token(); tok != 2 {
		t.Fatalf("token after re-acquire = %d, want 2", tok)
	}
}

func TestDoubleReleaseIsLeaseLost(t *testing.T) {
	l := newLocker(t, dialects.Table{})
	a := mustAcquire(t, l, "x", dialects.Options{})
	if err := a.Release(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	err := a.Release(ctxT(t))
	wantErr(t, err, dialects.ErrLeaseLost)
	err = a.Refresh(ctxT(t))
	wantErr(t, err, dialects.ErrLeaseLost)
}

func TestAtLeastKeepsLockAfterRelease(t *testing.T) {
	l := newLocker(t, dialects.Table{})
	ctx := ctxT(t)
	a := mustAcquire(t, l, "short-job", dialects.Options{Owner: "a", AtMost: 5 * time.Second, AtLeast: 400 * time.Millisecond})
	row := mustInspect(t, l, "short-job")
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	after := mustInspect(t, l, "short-job")
	if want := row.LockedAt.Add(400 * time.Millisecond); !after.Until.Equal(want) {
		t.Fatalf("until after early release = %s, want locked_at + at-least = %s", after.Until, want)
	}
	_, err := l.Acquire(ctx, "short-job", dialects.Options{Owner: "b"})
	wantErr(t, err, dialects.ErrHeld)

	b, err := l.Acquire(ctx, "short-job", dialects.Options{Owner: "b", Wait: 3 * time.Second, RetryEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatalf("acquire after at-least: %v", err)
	}
	got := mustInspect(t, l, "short-job")
	if got.LockedAt.Before(row.LockedAt.Add(400 * time.Millisecond)) {
		t.Fatalf("b locked at %s, before the at-least end %s", got.LockedAt, row.LockedAt.Add(400*time.Millisecond))
	}
	_ = b.Release(ctx)

	// A release after at-least has passed frees the lock at once.
	c := mustAcquire(t, l, "late", dialects.Options{AtMost: 5 * time.Second, AtLeast: 50 * time.Millisecond})
	time.Sleep(80 * time.Millisecond)
	if err := c.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if row := mustInspect(t, l, "late"); !row.Expired() {
		t.Fatalf("row = %+v, want expired right after a release past at-least", row)
	}
}

func TestAcquireWaits(t *testing.T) {
	l := newLocker(t, dialects.Table{})
	ctx := ctxT(t)
	a := mustAcquire(t, l, "w", dialects.Options{Owner: "a"})

	start := time.Now()
	_, err := l.Acquire(ctx, "w", dialects.Options{Owner: "b", Wait: 300 * time.Millisecond, RetryEvery: 40 * time.Millisecond})
	wantErr(t, err, dialects.ErrHeld)
	if d := time.Since(start); d < 300*time.Millisecond || d > 2*time.Second {
		t.Fatalf("waited %s, want about 300ms", d)
	}

	go func() {
		time.Sleep(150 * time.Millisecond)
		_ = a.Release(context.Background())
	}()
	start = time.Now()
	b, err := l.Acquire(ctx, "w", dialects.Options{Owner: "b", Wait: 5 * time.Second, RetryEvery: 20 * time.Millisecond})
	if err != nil {
		t.Fatalf("acquire while the holder releases: %v", err)
	}
	if d := time.Since(start); d < 100*time.Millisecond || d > 3*time.Second {
		t.Fatalf("acquired after %s, want shortly after the release at 150ms", d)
	}
	_ = b.Release(ctx)
}

func TestAcquireHonoursContext(t *testing.T) {
	l := newLocker(t, dialects.Table{})
	_ = mustAcquire(t, l, "c", dialects.Options{Owner: "a"})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := l.Acquire(ctx, "c", dialects.Options{Owner: "b", Wait: time.Minute, RetryEvery: 20 * time.Millisecond})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want the context's deadline", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("returned after %s, want right after the 150ms deadline", d)
	}
}

func TestInvalidInput(t *testing.T) {
	l := newLocker(t, dialects.Table{})
	ctx := ctxT(t)
	_, err := l.Acquire(ctx, "", dialects.Options{})
	wantErr(t, err, dialects.ErrInvalid)
	_, err = l.Acquire(ctx, "bad\xff", dialects.Options{})
	wantErr(t, err, dialects.ErrInvalid)
	_, err = l.Acquire(ctx, "n", dialects.Options{AtMost: time.Second, AtLeast: 2 * time.Second})
	wantErr(t, err, dialects.ErrInvalid)
	_, err = l.Handle("n", "", 0, dialects.Options{})
	wantErr(t, err, dialects.ErrInvalid)
	_, _, err = l.Inspect(ctx, "")
	wantErr(t, err, dialects.ErrInvalid)
}

func TestOneStatementPerOperation(t *testing.T) {
	l := newLocker(t, dialects.Table{})
	ctx := ctxT(t)
	// Warm up: the first use of each statement prepares it.
	a := mustAcquire(t, l, "s", dialects.Options{})
	if err := a.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	start := l.Stats()
	if start.Prepare != 3 {
		t.Fatalf("prepares after warm-up = %d, want 3 (acquire, refresh, release)", start.Prepare)
	}
	const cycles = 5
	for range cycles {
		a := mustAcquire(t, l, "s", dialects.Options{})
		if err := a.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		if err := a.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	got := l.Stats().Sub(start)
	want := struct{ acq, ref, rel, prep int64 }{cycles, cycles, cycles, 0}
	if got.Acquire != want.acq || got.Refresh != want.ref || got.Release != want.rel || got.Prepare != 0 || got.Sent() != 3*cycles {
		t.Fatalf("stats = %+v, want %d of each and no prepare", got, cycles)
	}

	// A refused acquire costs the statement plus one Inspect for the holder.
	h := mustAcquire(t, l, "s", dialects.Options{Owner: "h"})
	defer func() { _ = h.Release(ctx) }()
	before := l.Stats()
	_, err := l.Acquire(ctx, "s", dialects.Options{})
	wantErr(t, err, dialects.ErrHeld)
	if d := l.Stats().Sub(before); d.Acquire != 1 || d.Inspect != 1 || d.Sent() != 2 {
		t.Fatalf("refused acquire sent %+v, want one acquire and one inspect", d)
	}
}

func TestStatements(t *testing.T) {
	l := newLocker(t, dialects.Table{})
	st := l.Statements()
	for _, op := range []string{"acquire", "refresh", "release", "expire", "inspect", "list", "create", "drop"} {
		if st[op] == "" {
			t.Errorf("Statements()[%q] is empty", op)
		}
	}
	if st["create"] != l.CreateSQL() {
		t.Errorf("create statement %q differs from CreateSQL %q", st["create"], l.CreateSQL())
	}
}
