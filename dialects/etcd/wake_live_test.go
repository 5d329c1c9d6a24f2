package etcd_test

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// watchers reads the server's count of watchers from its metrics (the
// client port serves /metrics over plain HTTP on the tests' servers).
func watchers(t *testing.T, ctx context.Context) int {
	t.Helper()
	u, err := url.Parse(liveDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	host := strings.Split(u.Host, ",")[0]
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("read the server's metrics: %v", err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "etcd_debugging_mvcc_watcher_total "); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}
	}
	t.Fatalf("the server's metrics have no etcd_debugging_mvcc_watcher_total (%v)", sc.Err())
	return 0
}

// A waiter in another backend (another process) is woken by the
// holder's release: with RetryEvery an hour it still gets the lock once
// the holder released, from the watch it set up when it was refused.
func TestWaiterIsWokenByTheRelease(t *testing.T) {
	holderB, waiterB := openLive(t), openLive(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	holderL, err := holderB.Locker(dialects.StrategyTable, dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	waiterL, err := waiterB.Locker(dialects.StrategyTable, dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	name := "wake-" + dialects.NewOwner()
	held, err := holderL.Acquire(ctx, name, dialects.Options{Owner: "holder", AtMost: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	before := watchers(t, ctx)
	got := make(chan error, 1)
	go func() {
		lease, err := waiterL.Acquire(ctx, name, dialects.Options{Owner: "waiter", AtMost: time.Hour, Wait: time.Minute, RetryEvery: time.Hour})
		if err == nil {
			err = lease.Release(context.WithoutCancel(ctx))
		}
		got <- err
	}()
	for watchers(t, ctx) <= before {
		select {
		case <-ctx.Done():
			t.Fatalf("the waiter never watched the lock: %v", ctx.Err())
		case err := <-got:
			t.Fatalf("the waiter returned while the lock was held: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("the waiter was not handed the lock after the release: %v", err)
	}
}

// A forced release (Expire) ends the holder's lease whichever way the
// holder releases: its backend's first lease, released by revoking its
// etcd lease, and a later one, released by a guarded delete — both
// report the lease lost, and the lock is free.
func TestReleaseAfterForcedReleaseReportsTheLoss(t *testing.T) {
	holderB, adminB := openLive(t), openLive(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	holderL, err := holderB.Locker(dialects.StrategyTable, dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	adminL, err := adminB.Locker(dialects.StrategyTable, dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	name := "forced-" + dialects.NewOwner()
	for _, which := range []string{"first lease", "later lease"} {
		held, err := holderL.Acquire(ctx, name, dialects.Options{Owner: "holder", AtMost: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := adminL.(dialects.LeaseLocker).Expire(ctx, name); err != nil || !ok {
			t.Fatalf("%s: expire: %v, %v", which, ok, err)
		}
		if err := held.Release(ctx); !errors.Is(err, dialects.ErrLeaseLost) {
			t.Errorf("%s: release after a forced release: %v, want the lease lost", which, err)
		}
		again, err := adminL.Acquire(ctx, name, dialects.Options{Owner: "admin"})
		if err != nil {
			t.Fatalf("%s: the lock is not free after the forced release: %v", which, err)
		}
		if err := again.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
