package etcd_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/etcd"
)

// A waiting acquire that gives up leaves no lease on the server once its
// backend is closed: the lease of each refused try is kept for the next
// try, and one that has become too old for it is revoked, not dropped.
// The leases are told apart by their TTL, which no other test uses.
func TestWaitingAcquireLeavesNoLease(t *testing.T) {
	dsn := liveDSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{u.Host}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	const atMost = 97 * time.Second
	// ours are the leases of the waiter's TTL on the server.
	ours := func() map[clientv3.LeaseID]bool {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		list, err := cli.Leases(ctx)
		if err != nil {
			t.Fatal(err)
		}
		found := map[clientv3.LeaseID]bool{}
		for _, l := range list.Leases {
			ttl, err := cli.TimeToLive(ctx, l.ID)
			if err == nil && ttl.GrantedTTL == int64(atMost/time.Second) {
				found[l.ID] = true
			}
		}
		return found
	}
	before := ours() // an earlier run's, until they expire
	table := dialects.Table{Name: checks.NewPrefix()}
	holder := openLive(t)
	hl, err := holder.Locker(dialects.StrategyTable, table)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	held, err := hl.Acquire(ctx, "waited-for", dialects.Options{Owner: "holder", AtMost: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(ctx)

	waiter, err := etcd.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := waiter.Locker(dialects.StrategyTable, table)
	if err != nil {
		t.Fatal(err)
	}
	// Tries every 400 ms, more than a spare's slack: each next try finds
	// the last one's lease too old.
	wctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	_, err = wl.Acquire(wctx, "waited-for", dialects.Options{Owner: "waiter", AtMost: atMost, Wait: time.Minute, RetryEvery: 400 * time.Millisecond})
	cancel()
	if err == nil {
		t.Fatal("the waiter got a held lock")
	}
	if err := waiter.Close(); err != nil {
		t.Fatal(err)
	}
	left := 0
	for id := range ours() {
		if !before[id] {
			left++
		}
	}
	if left != 0 {
		t.Errorf("%d leases the waiter granted are left on the server after its backend closed", left)
	}
}
