package zookeeper

import (
	"context"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/benchkit"
	"github.com/schedlock/schedlock/internal/livetest"
)

// BenchmarkHandOver measures the hand-over from a holder's release to a
// waiter's acquire, holder and waiter each on a backend (a session) of
// its own, one hand-over of each lock per iteration in a random order:
//
//   - engine: the engine's waiting Acquire (a watch on the node ahead);
//   - zklock: go-zookeeper's zk.NewLock Lock (a watch on the node
//     ahead), on each backend's connection.
//
// It reports each one's median and p90 in milliseconds:
//
//	go test ./dialects/zookeeper -run '^$' -bench HandOver -benchtime 60x
func BenchmarkHandOver(b *testing.B) {
	ctx := context.Background()
	open := func() *Backend {
		be, err := Open(ctx, livetest.DSN(b, livetest.ZooKeeper))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { be.Close() })
		return be
	}
	holderB, waiterB := open(), open()
	table := dialects.Table{Name: "schedlock_bench_handover"}
	locker := func(be *Backend) dialects.Locker {
		l, err := be.LeaseLocker(table)
		if err != nil {
			b.Fatal(err)
		}
		return l
	}
	holderL, waiterL := locker(holderB), locker(waiterB)
	if err := holderL.(*Locker).CreateTable(ctx); err != nil {
		b.Fatal(err)
	}
	defer holderL.(*Locker).DropTable(ctx)
	engine := func(l dialects.Locker, wait time.Duration) benchkit.Take {
		return func(ctx context.Context) (func(context.Context) error, error) {
			lease, err := l.Acquire(ctx, "handover", dialects.Options{Owner: "bench", AtMost: time.Minute, Wait: wait})
			if err != nil {
				return nil, err
			}
			return lease.Release, nil
		}
	}
	path := holderB.cfg.Chroot + "/schedlock_bench_zklock_handover"
	defer deleteAll(holderB.conn, path)
	zkLock := func(be *Backend) benchkit.Take {
		return func(context.Context) (func(context.Context) error, error) {
			l := zk.NewLock(be.conn, path, zk.WorldACL(zk.PermAll))
			if err := l.Lock(); err != nil {
				return nil, err
			}
			return func(context.Context) error { return l.Unlock() }, nil
		}
	}
	peers := []benchkit.HandOverPeer{
		{Name: "engine", Holder: engine(holderL, 0), Waiter: engine(waiterL, time.Minute)},
		{Name: "zklock", Holder: zkLock(holderB), Waiter: zkLock(waiterB)},
	}
	b.ResetTimer()
	res, err := benchkit.HandOverTurns(ctx, peers, b.N)
	if err != nil {
		b.Fatal(err)
	}
	for _, h := range res {
		b.ReportMetric(h.MedianMS, h.Strategy+"-median-ms")
		b.ReportMetric(h.P90MS, h.Strategy+"-p90-ms")
	}
}
