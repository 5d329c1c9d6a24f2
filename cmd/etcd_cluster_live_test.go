//go:build unix

package cmd

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/etcd"
)

// TestEtcdClusterLock runs the lock on a three-member etcd cluster of the
// test's own, named by all three client URLs:
//   - detect reports the cluster of 3 members, without the single-member
//     risk;
//   - the leader killed, the holder's lease lives on through the two
//     members left: it refreshes within its lease, another owner is
//     refused, and a contender that waits through the election gets the
//     lock after the release, with a higher token;
//   - a second member killed (no quorum), no refresh or acquire succeeds
//     and the lease ends at its Until; with a member back, the lock is
//     taken again with a higher token.
func TestEtcdClusterLock(t *testing.T) {
	etcdLive(t) // the test needs the etcd binaries the live suite has
	members := startEtcdCluster(t, 3)
	var clients []string
	for _, m := range members {
		clients = append(clients, m.client)
	}
	dsn := "etcd://" + strings.Join(clients, ",") + "/cluster"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	d := runWithInput(t, false, "", "detect", "--dsn", dsn)
	if d.err != nil || !strings.Contains(d.stdout, "cluster of 3 members") || strings.Contains(d.stdout, "single-member") {
		t.Errorf("detect on the cluster: %v\n%s", d.err, d.stdout)
	}

	holder, contender := openEtcd(t, dsn), openEtcd(t, dsn)
	hl, cl := etcdLocker(t, holder), etcdLocker(t, contender)
	lease, err := hl.Acquire(ctx, "report", dialects.Options{Owner: "holder", AtMost: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := lease.Token()

	leader := etcdLeader(t, ctx, members)
	leader.stop(t)
	// A contender waits through the election (its tries meet no leader, or
	// the holder) until the holder releases.
	type result struct {
		lease dialects.Lease
		err   error
	}
	waited := make(chan result, 1)
	go func() {
		l, err := cl.Acquire(ctx, "report", dialects.Options{Owner: "contender", AtMost: 5 * time.Second, Wait: time.Minute, RetryEvery: 20 * time.Millisecond})
		waited <- result{l, err}
	}()
	var left []*etcdMember
	for _, m := range members {
		if m != leader {
			left = append(left, m)
		}
	}
	refreshed := false
	for !refreshed && time.Now().Before(lease.Until()) {
		rctx, rcancel := context.WithTimeout(ctx, time.Second)
		refreshed = lease.Refresh(rctx) == nil
		rcancel()
	}
	if !refreshed || lease.Err() != nil {
		t.Fatalf("the holder did not refresh through the members left before its lease ended: %v", lease.Err())
	}
	var held *dialects.HeldError
	if _, err := cl.Acquire(ctx, "report", dialects.Options{Owner: "peeker", AtMost: 10 * time.Second}); !errors.As(err, &held) || held.Holder != "holder" {
		t.Fatalf("another owner's acquire after the leader stopped: %v, want held by holder", err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatalf("release after the leader stopped: %v", err)
	}
	w := <-waited
	if w.err != nil {
		t.Fatalf("the contender waiting through the election did not get the lock: %v", w.err)
	}
	next := w.lease
	second, _ := next.Token()
	if second <= first {
		t.Errorf("token %d after the leader stopped is not above %d", second, first)
	}

	// No quorum: nothing is refreshed or taken, and the lease ends.
	left[0].stop(t)
	rctx, rcancel := context.WithTimeout(ctx, 2*time.Second)
	err = next.Refresh(rctx)
	rcancel()
	if err == nil {
		t.Error("a refresh without quorum succeeded")
	}
	actx, acancel := context.WithTimeout(ctx, 2*time.Second)
	if _, err := hl.Acquire(actx, "other", dialects.Options{Owner: "holder", AtMost: 5 * time.Second}); err == nil {
		t.Error("an acquire without quorum succeeded")
	}
	acancel()
	select {
	case <-next.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the lease did not end without quorum")
	}
	if !errors.Is(next.Err(), dialects.ErrLeaseLost) {
		t.Errorf("lease without quorum ended with %v, want ErrLeaseLost", next.Err())
	}

	// A member back: the lock is taken again once the lost lease has run
	// out on the server.
	left[0].start(t)
	again, err := hl.Acquire(ctx, "report", dialects.Options{Owner: "holder", AtMost: 10 * time.Second, Wait: time.Minute, RetryEvery: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("no acquire after quorum came back: %v", err)
	}
	if third, _ := again.Token(); third <= second {
		t.Errorf("token %d after quorum came back is not above %d", third, second)
	}
	_ = again.Release(ctx)
}

func etcdLocker(t *testing.T, b *etcd.Backend) dialects.Locker {
	t.Helper()
	l, err := b.Locker(dialects.StrategyTable, dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// etcdLeader is the member the cluster's status names as its leader.
func etcdLeader(t *testing.T, ctx context.Context, members []*etcdMember) *etcdMember {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{members[0].client}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	var leader uint64
	ids := map[uint64]*etcdMember{}
	for _, m := range members {
		st, err := cli.Status(ctx, m.client)
		if err != nil {
			t.Fatal(err)
		}
		ids[st.Header.MemberId], leader = m, st.Leader
	}
	if m := ids[leader]; m != nil {
		return m
	}
	t.Fatalf("no member is the leader %x", leader)
	return nil
}
