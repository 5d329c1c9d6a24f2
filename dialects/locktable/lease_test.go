package locktable_test

import (
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

func TestRefreshExtendsLease(t *testing.T) {
	l := newLocker(t, dialects.Table{})
	ctx := ctxT(t)
	const atMost = 300 * time.Millisecond
	a := mustAcquire(t, l, "r", dialects.Options{Owner: "a", AtMost: atMost})
	first := mustInspect(t, l, "r")
	firstUntil := a.Until()

	// Refresh every 100ms for 600ms: twice the lease, and still held.
	for range 6 {
		time.Sleep(100 * time.Millisecond)
		before := time.Now()
		if err := a.Refresh(ctx); err != nil {
			t.Fatalf("refresh: %v", err)
		}
		if u := a.Until(); u.Before(before.Add(atMost)) {
			t.Fatalf("Until after refresh = %s, want >= %s", u, before.Add(atMost))
		}
	}
	if isClosed(a.Done()) {
		t.Fatalf("lease ended while refreshed: %v", a.Err())
	}
	row := mustInspect(t, l, "r")
	if !row.Until.After(first.Until.Add(400*time.Millisecond)) || row.Expired() {
		t.Fatalf("row after refreshes = %+v, want lease end moved past %s", row, first.Until)
	}
	if !row.LockedAt.Equal(first.LockedAt) || row.Token != first.Token {
		t.Fatalf("refresh changed locked_at or token: %+v -> %+v", first, row)
	}
	if !a.Until().After(firstUntil) {
		t.Fatalf("Until did not move: %s", a.Until())
	}
	_, err := l.Acquire(ctx, "r", dialects.Options{Owner: "b"})
	wantErr(t, err, dialects.ErrHeld)
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestLeaseExpiresWithoutRefresh(t *testing.T) {
	l := newLocker(t, dialects.Table{})
	ctx := ctxT(t)
	a := mustAcquire(t, l, "e", dialects.Options{Owner: "a", AtMost: 200 * time.Millisecond})
	waitClosed(t, a.Done(), 2*time.Second, "Done of an unrefreshed 200ms lease")
	wantErr(t, a.Err(), dialects.ErrLeaseLost)
	if !strings.Contains(a.Err().Error(), "expired") {
		t.Fatalf("Err = %v, want it to say the lease expired", a.Err())
	}
	wantErr(t, a.Refresh(ctx), dialects.ErrLeaseLost)
	wantErr(t, a.Release(ctx), dialects.ErrLeaseLost)

	// The host timer fires no later than the row's lease end, so b may
	// have to wait a moment for the database to agree.
	b := mustAcquire(t, l, "e", dialects.Options{Owner: "b", Wait: time.Second, RetryEvery: 10 * time.Millisecond})
	if tok, _ := b.Token(); tok != 2 {
		t.Fatalf("token after takeover of an expired lease = %d, want 2", tok)
	}
}

func TestTakeoverIsLeaseLost(t *testing.T) {
	l := newLocker(t, dialects.Table{})
	ctx := ctxT(t)
	a := mustAcquire(t, l, "t", dialects.Options{Owner: "a"})

	ok, err := l.Expire(ctx, "t")
	if err != nil || !ok {
		t.Fatalf("expire = %v, %v; want true", ok, err)
	}
	b := mustAcquire(t, l, "t", dialects.Options{Owner: "b"})

	err = a.Refresh(ctx)
	wantErr(t, err, dialects.ErrLeaseLost)
	if !strings.Contains(err.Error(), "taken over by b") {
		t.Fatalf("refresh error = %v, want it to name b", err)
	}
	if !isClosed(a.Done()) {
		t.Fatal("Done not closed after the lease was lost")
	}
	wantErr(t, a.Err(), dialects.ErrLeaseLost)
	wantErr(t, a.Release(ctx), dialects.ErrLeaseLost)

	// b is untouched by a's attempts.
	if row := mustInspect(t, l, "t"); row.Owner != "b" || row.Expired() {
		t.Fatalf("row = %+v, want b's live lease", row)
	}
	if err := b.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestReleaseAfterExpiryIsLeaseLost(t *testing.T) {
	l := newLocker(t, dialects.Table{})
	ctx := ctxT(t)
	a := mustAcquire(t, l, "x", dialects.Options{Owner: "a"})
	if ok, err := l.Expire(ctx, "x"); err != nil || !ok {
		t.Fatalf("expire = %v, %v", ok, err)
	}
	err := a.Release(ctx)
	wantErr(t, err, dialects.ErrLeaseLost)
	if !strings.Contains(err.Error(), "expired") {
		t.Fatalf("release error = %v, want it to say expired", err)
	}
}

func TestTokenChangeIsLeaseLost(t *testing.T) {
	l := newLocker(t, dialects.Table{})
	ctx := ctxT(t)
	// The same owner string acquires again after a forced expiry: the old
	// lease's token no longer matches.
	old := mustAcquire(t, l, "tok", dialects.Options{Owner: "same"})
	if _, err := l.Expire(ctx, "tok"); err != nil {
		t.Fatal(err)
	}
	cur := mustAcquire(t, l, "tok", dialects.Options{Owner: "same"})
	if tok, _ := cur.Token(); tok != 2 {
		t.Fatalf("token = %d, want 2", tok)
	}
	err := old.Refresh(ctx)
	wantErr(t, err, dialects.ErrLeaseLost)
	if !strings.Contains(err.Error(), "token 2") {
		t.Fatalf("error = %v, want it to name the new token", err)
	}
	h, err := l.Handle("tok", "same", 1, dialects.Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, h.Release(ctx), dialects.ErrLeaseLost)
	if err := cur.Refresh(ctx); err != nil {
		t.Fatalf("current lease refresh: %v", err)
	}
}

func TestTokenGrowsOnEveryAcquire(t *testing.T) {
	l := newLocker(t, dialects.Table{})
	ctx := ctxT(t)
	var last int64
	for i := range 6 {
		lease := mustAcquire(t, l, "grow", dialects.Options{Owner: "o"})
		tok, ok := lease.Token()
		if !ok || tok <= last {
			t.Fatalf("acquire %d: token %d, %v after %d", i, tok, ok, last)
		}
		last = tok
		if i%2 == 0 {
			err := lease.Release(ctx)
			if err != nil {
				t.Fatal(err)
			}
		} else if _, err := l.Expire(ctx, "grow"); err != nil {
			t.Fatal(err)
		}
	}
	if last != 6 {
		t.Fatalf("last token = %d, want 6", last)
	}
}

func TestHandleOfAnotherOwnerIsNotOwner(t *testing.T) {
	l := newLocker(t, dialects.Table{})
	ctx := ctxT(t)
	a := mustAcquire(t, l, "h", dialects.Options{Owner: "a"})
	tok, _ := a.Token()
	before := mustInspect(t, l, "h")

	intruder, err := l.Handle("h", "intruder", 0, dialects.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !intruder.Until().IsZero() {
		t.Fatalf("Handle Until = %s, want zero before a refresh", intruder.Until())
	}
	err = intruder.Refresh(ctx)
	wantErr(t, err, dialects.ErrNotOwner)
	if !strings.Contains(err.Error(), "held by a") {
		t.Fatalf("error = %v, want it to name the holder", err)
	}
	wantErr(t, intruder.Release(ctx), dialects.ErrNotOwner)
	// With the holder's token but the wrong owner: still not the owner.
	withToken, _ := l.Handle("h", "intruder", tok, dialects.Options{})
	wantErr(t, withToken.Release(ctx), dialects.ErrNotOwner)
	if isClosed(intruder.Done()) {
		t.Fatal("ErrNotOwner ended the handle")
	}
	if after := mustInspect(t, l, "h"); after.Owner != before.Owner || !after.Until.Equal(before.Until) ||
		after.Token != before.Token || !after.LockedAt.Equal(before.LockedAt) {
		t.Fatalf("row changed by another owner: %+v -> %+v", before, after)
	}
	if isClosed(a.Done()) {
		t.Fatal("holder's lease ended")
	}
	if err := a.Release(ctx); err != nil {
		t.Fatalf("holder release: %v", err)
	}
}

func TestHandleOfTheOwner(t *testing.T) {
	l := newLocker(t, dialects.Table{})
	ctx := ctxT(t)
	a := mustAcquire(t, l, "job", dialects.Options{Owner: "proc-1", AtMost: time.Minute})
	tok, _ := a.Token()

	h, err := l.Handle("job", "proc-1", tok, dialects.Options{AtMost: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := h.Token(); !ok || got != tok {
		t.Fatalf("handle token = %d, %v", got, ok)
	}
	before := time.Now()
	if err := h.Refresh(ctx); err != nil {
		t.Fatalf("refresh by handle: %v", err)
	}
	if u := h.Until(); u.Before(before.Add(2 * time.Minute)) {
		t.Fatalf("handle Until = %s after refresh", u)
	}
	row := mustInspect(t, l, "job")
	if d := row.Until.Sub(row.DBNow); d < time.Minute+50*time.Second {
		t.Fatalf("lease left after a 2m refresh = %s", d)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatalf("release by handle: %v", err)
	}
	if !isClosed(h.Done()) || h.Err() != nil {
		t.Fatal("handle not cleanly done after release")
	}
	if row := mustInspect(t, l, "job"); !row.Expired() {
		t.Fatalf("row after handle release = %+v", row)
	}
	// Token 0 skips the token comparison.
	b := mustAcquire(t, l, "job", dialects.Options{Owner: "proc-2"})
	h0, _ := l.Handle("job", "proc-2", 0, dialects.Options{})
	if _, ok := h0.Token(); ok {
		t.Fatal("handle with token 0 reports a token")
	}
	if err := h0.Release(ctx); err != nil {
		t.Fatalf("release by token-0 handle: %v", err)
	}
	wantErr(t, b.Refresh(ctx), dialects.ErrLeaseLost)
}
