package redis_test

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/schedlock/schedlock/dialects"
)

// nativeRig is a native-layout locker under a prefix of its own (removed
// when the test ends) and a plain client on the same Redis, to read and
// write its keys as another tool would.
type nativeRig struct {
	l      dialects.LeaseLocker
	rc     *goredis.Client
	prefix string
}

func newNativeRig(t *testing.T) nativeRig {
	t.Helper()
	b := openLive(t)
	prefix := "schedlock_layout_" + time.Now().Format("150405.000000")[7:]
	l, err := b.Locker(dialects.StrategyTable, dialects.Table{Name: prefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.(dialects.TableDropper).DropTable(context.Background()) })
	opt, err := goredis.ParseURL(liveDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	rc := goredis.NewClient(opt)
	t.Cleanup(func() { _ = rc.Close() })
	return nativeRig{l: l.(dialects.LeaseLocker), rc: rc, prefix: prefix}
}

func (r nativeRig) key(name string) string { return r.prefix + ":{" + name + "}" }

// serverMS is the server's now in Unix milliseconds.
func (r nativeRig) serverMS(t *testing.T) int64 {
	t.Helper()
	now, err := r.rc.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now.UnixMilli()
}

// inspect is the row of name, which must be held.
func (r nativeRig) inspect(t *testing.T, name string) dialects.Row {
	t.Helper()
	row, found, err := r.l.Inspect(context.Background(), name)
	if err != nil || !found || row.Expired() {
		t.Fatalf("inspect %s: %+v found=%v %v, want a held lock", name, row, found, err)
	}
	return row
}

// nearMS fails unless got is want to within 2 ms (a script's commands may
// read the server's clock a millisecond apart).
func nearMS(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if d := got.Sub(want); d < -2*time.Millisecond || d > 2*time.Millisecond {
		t.Errorf("%s = %s, want %s (off by %s)", what, got.Format(time.StampMilli), want.Format(time.StampMilli), d)
	}
}

// The native lock key holds "<span> <nonce> <owner>" — the span the
// key's expiry is from its locked-at, at-most when taken — and its token
// only the counter, which a refused try leaves as it was
// (docs/backends.md, "Key layouts").
func TestNativeKeyLayout(t *testing.T) {
	r := newNativeRig(t)
	ctx := context.Background()
	lease, err := r.l.Acquire(ctx, "nightly", dialects.Options{Owner: "host-a 42", AtMost: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	token, _ := lease.Token()
	v, err := r.rc.Get(ctx, r.key("nightly")).Result()
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^60000 [a-z]{12} host-a 42$`).MatchString(v) {
		t.Errorf("lock value %q, want \"60000 <12 letters> host-a 42\"", v)
	}
	if n, err := r.rc.Get(ctx, r.key("nightly")+":token").Int64(); err != nil || n != token || token < 1 {
		t.Errorf("counter %d (%v), lease token %d", n, err, token)
	}
	if _, err := r.l.Acquire(ctx, "nightly", dialects.Options{Owner: "host-b", AtMost: time.Minute}); !errors.Is(err, dialects.ErrHeld) {
		t.Fatalf("second acquire: %v, want held", err)
	}
	if n, _ := r.rc.Get(ctx, r.key("nightly")+":token").Int64(); n != token {
		t.Errorf("a refused acquire moved the counter from %d to %d", token, n)
	}
	row := r.inspect(t, "nightly")
	if row.Owner != "host-a 42" || !row.HasToken || row.Token != token {
		t.Errorf("row %+v, want owner \"host-a 42\" and token %d", row, token)
	}
	nearMS(t, "lock_until - locked_at", row.LockedAt.Add(time.Minute), row.Until)
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// At-least counts from the acquire however often the lease was
// refreshed: refreshes keep the locked-at, and a release keeps the key
// until locked-at + at-least, on the server's clock.
func TestAtLeastCountsFromTheAcquireAcrossRefreshes(t *testing.T) {
	r := newNativeRig(t)
	ctx := context.Background()
	lease, err := r.l.Acquire(ctx, "nightly", dialects.Options{Owner: "job", AtMost: time.Minute, AtLeast: 40 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	first := r.inspect(t, "nightly")
	for range 3 {
		time.Sleep(30 * time.Millisecond)
		before := r.serverMS(t)
		if err := lease.Refresh(ctx); err != nil {
			t.Fatal(err)
		}
		row := r.inspect(t, "nightly")
		nearMS(t, "locked_at after a refresh", row.LockedAt, first.LockedAt)
		if until := row.Until.UnixMilli(); until < before+60000 || until > r.serverMS(t)+60000 {
			t.Errorf("lock_until %d after a refresh, want from %d to now + at-most", until, before+60000)
		}
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	kept := r.inspect(t, "nightly")
	nearMS(t, "lock_until after the release", kept.Until, first.LockedAt.Add(40*time.Second))
	nearMS(t, "locked_at after the release", kept.LockedAt, first.LockedAt)
	if _, err := r.l.Acquire(ctx, "nightly", dialects.Options{Owner: "other"}); !errors.Is(err, dialects.ErrHeld) {
		t.Errorf("acquire within at-least: %v, want held", err)
	}
}

// A handle (unlock, or a lease of another process) refreshes and
// releases a lock by its owner and token, and keeps its locked-at and
// at-least as the acquiring lease does; its refresh leaves the acquiring
// lease the lock's holder.
func TestHandleOnTheNativeLayout(t *testing.T) {
	r := newNativeRig(t)
	ctx := context.Background()
	lease, err := r.l.Acquire(ctx, "nightly", dialects.Options{Owner: "job", AtMost: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	token, _ := lease.Token()
	first := r.inspect(t, "nightly")
	stale, err := r.l.Handle("nightly", "job", token+1, dialects.Options{AtMost: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := stale.Refresh(ctx); !errors.Is(err, dialects.ErrLeaseLost) {
		t.Errorf("refresh by a handle of another token: %v, want lost", err)
	}
	other, _ := r.l.Handle("nightly", "someone", 0, dialects.Options{AtMost: time.Minute})
	if err := other.Release(ctx); !errors.Is(err, dialects.ErrNotOwner) {
		t.Errorf("release by another owner: %v, want not owner", err)
	}
	h, err := r.l.Handle("nightly", "job", token, dialects.Options{AtMost: time.Minute, AtLeast: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if err := h.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	nearMS(t, "locked_at after a handle's refresh", r.inspect(t, "nightly").LockedAt, first.LockedAt)
	if err := lease.Refresh(ctx); err != nil {
		t.Fatalf("the acquiring lease after its owner's handle refreshed it: %v", err)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	nearMS(t, "lock_until after a handle's release", r.inspect(t, "nightly").Until, first.LockedAt.Add(30*time.Second))
}

// A lock written by an earlier schedlock, "<token> <locked_at> <owner>"
// with the token in the value, is still read, refused and released by
// its owner and token, so that nodes can be upgraded one at a time.
func TestLockOfTheEarlierNativeLayout(t *testing.T) {
	r := newNativeRig(t)
	ctx := context.Background()
	at := r.serverMS(t) - 5000
	key := r.key("nightly")
	if err := r.rc.Set(ctx, key+":token", 7, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := r.rc.Set(ctx, key, "7 "+strconv.FormatInt(at, 10)+" old node", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	var held *dialects.HeldError
	if _, err := r.l.Acquire(ctx, "nightly", dialects.Options{Owner: "new"}); !errors.As(err, &held) || held.Holder != "old node" {
		t.Fatalf("acquire beside an earlier lock: %v, want held by \"old node\"", err)
	}
	row := r.inspect(t, "nightly")
	if row.Owner != "old node" || row.Token != 7 || !row.HasToken || row.LockedAt.UnixMilli() != at {
		t.Errorf("row %+v, want owner \"old node\", token 7, locked_at %d", row, at)
	}
	wrong, _ := r.l.Handle("nightly", "old node", 6, dialects.Options{AtMost: time.Minute})
	if err := wrong.Release(ctx); err == nil {
		t.Error("release by a handle of token 6 of a lock with token 7 succeeded")
	}
	h, _ := r.l.Handle("nightly", "old node", 7, dialects.Options{AtMost: 2 * time.Minute, AtLeast: 30 * time.Second})
	if err := h.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got := r.inspect(t, "nightly"); got.LockedAt.UnixMilli() != at || got.Until.UnixMilli() < r.serverMS(t)+110000 {
		t.Errorf("after a handle's refresh: %+v, want locked_at %d and 2 minutes of lease", got, at)
	}
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	nearMS(t, "lock_until after the release", r.inspect(t, "nightly").Until, time.UnixMilli(at+30000))
}

// The fencing token is the server's TIME in microseconds, or the counter
// + 1 when the counter is already there or beyond: a counter of the
// earlier INCR tokens (small) jumps to the clock, and one beyond the
// clock (a clock that went back) still grows by one. Either way the
// lease, the counter and the listing agree.
func TestTokenFloorIsTheServerClock(t *testing.T) {
	r := newNativeRig(t)
	ctx := context.Background()
	counter := r.key("nightly") + ":token"
	take := func(t *testing.T) int64 {
		t.Helper()
		lease, err := r.l.Acquire(ctx, "nightly", dialects.Options{Owner: "job", AtMost: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		defer lease.Release(ctx)
		token, ok := lease.Token()
		if n, err := r.rc.Get(ctx, counter).Int64(); !ok || err != nil || n != token {
			t.Fatalf("lease token %d (%v), counter %d (%v)", token, ok, n, err)
		}
		if row := r.inspect(t, "nightly"); row.Token != token {
			t.Errorf("row token %d, lease token %d", row.Token, token)
		}
		return token
	}
	t.Run("an INCR counter jumps to the clock", func(t *testing.T) {
		if err := r.rc.Set(ctx, counter, 7, 0).Err(); err != nil {
			t.Fatal(err)
		}
		before := r.serverMS(t) * 1000
		token := take(t)
		after := (r.serverMS(t) + 1) * 1000
		if token < before || token > after {
			t.Errorf("token %d, want the server's TIME in µs, between %d and %d", token, before, after)
		}
		if next := take(t); next <= token {
			t.Errorf("next token %d, not above %d", next, token)
		}
	})
	t.Run("a counter beyond the clock grows by one", func(t *testing.T) {
		ahead := (r.serverMS(t) + 3_600_000) * 1000 // an hour ahead
		if err := r.rc.Set(ctx, counter, ahead, 0).Err(); err != nil {
			t.Fatal(err)
		}
		if token := take(t); token != ahead+1 {
			t.Errorf("token %d, want %d", token, ahead+1)
		}
		if token := take(t); token != ahead+2 {
			t.Errorf("token %d, want %d", token, ahead+2)
		}
	})
	t.Run("no counter: the clock", func(t *testing.T) {
		if err := r.rc.Del(ctx, counter).Err(); err != nil {
			t.Fatal(err)
		}
		before := r.serverMS(t) * 1000
		token := take(t)
		if after := (r.serverMS(t) + 1) * 1000; token < before || token > after {
			t.Errorf("token %d without a counter, want the server's TIME in µs, between %d and %d", token, before, after)
		}
	})
}
