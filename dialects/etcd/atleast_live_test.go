package etcd_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/tcpproxy"
)

// TestAtLeastCountsFromTheGrant: the at-least of an early release counts
// from when etcd granted the lock, not from when the acquire was sent.
// The holder reaches etcd through a proxy that holds every chunk for d;
// the lock is granted no earlier than 3d after the acquire was sent (a
// fresh backend has no spare lease: its grant goes out and comes back
// before the transaction goes out, and the transaction reaches etcd d
// later). A contender on a direct connection must not get the lock
// before at-least has passed from there. Counting from the host time
// before the request, as locked-at shows it, frees it up to 3d early.
func TestAtLeastCountsFromTheGrant(t *testing.T) {
	dsn := liveDSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := tcpproxy.Start(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	slow := openDSN(t, strings.Replace(dsn, u.Host, proxy.Addr(), 1))
	direct := openLive(t)
	table := dialects.Table{Name: checks.NewPrefix()}
	sl, err := slow.Locker(dialects.StrategyTable, table)
	if err != nil {
		t.Fatal(err)
	}
	dl, err := direct.Locker(dialects.StrategyTable, table)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	const d, atLeast = 200 * time.Millisecond, time.Second
	proxy.Delay(d)
	sent := time.Now()
	held, err := sl.Acquire(ctx, "nightly", dialects.Options{Owner: "slow", AtMost: 10 * time.Second, AtLeast: atLeast})
	proxy.Delay(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	taker, err := dl.Acquire(ctx, "nightly", dialects.Options{Owner: "direct", AtMost: 10 * time.Second, Wait: 10 * time.Second, RetryEvery: 10 * time.Millisecond})
	got := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if err := taker.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if earliest := sent.Add(3*d + atLeast); got.Before(earliest) {
		t.Fatalf("the next holder had the lock %s after the first acquire was sent; at-least %s from its grant (at least %s after it was sent) ends no earlier than %s",
			got.Sub(sent).Round(time.Millisecond), atLeast, 3*d, earliest.Sub(sent))
	}
}

// TestHandleKeepsAtLeastFromItsRelease: a Handle, built without the
// acquire's answer, cannot know when the lock was granted, so its release
// keeps the key for the whole at-least from then, never for at-least from
// the key's locked-at (the acquirer's host time before its request).
func TestHandleKeepsAtLeastFromItsRelease(t *testing.T) {
	holder, other := openLive(t), openLive(t)
	table := dialects.Table{Name: checks.NewPrefix()}
	hl, err := holder.Locker(dialects.StrategyTable, table)
	if err != nil {
		t.Fatal(err)
	}
	ol, err := other.LeaseLocker(table)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const atLeast = time.Second
	if _, err := hl.Acquire(ctx, "nightly", dialects.Options{Owner: "job", AtMost: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(atLeast / 2) // at-least from locked-at would now end in half of it
	h, err := ol.Handle("nightly", "job", 0, dialects.Options{AtMost: 10 * time.Second, AtLeast: atLeast})
	if err != nil {
		t.Fatal(err)
	}
	released := time.Now()
	if err := h.Release(ctx); err != nil {
		t.Fatal(err)
	}
	taker, err := ol.Acquire(ctx, "nightly", dialects.Options{Owner: "next", AtMost: 10 * time.Second, Wait: 10 * time.Second, RetryEvery: 10 * time.Millisecond})
	got := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if err := taker.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if gap := got.Sub(released); gap < atLeast {
		t.Fatalf("the next holder had the lock %s after the handle's release, before its at-least of %s", gap.Round(time.Millisecond), atLeast)
	}
}
