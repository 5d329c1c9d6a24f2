package zookeeper

import (
	"context"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
	"github.com/schedlock/schedlock/internal/livetest"
)

// BenchmarkCycleRatio interleaves three lock cycles on the live
// ZooKeeper, one of each per iteration in a random order, each timed on
// its own, so that all three see the same load on a shared machine:
//
//   - engine: the engine's Acquire and Release (Curator's recipe: an
//     ephemeral sequential node, the children listed, the node deleted);
//   - raw: the bench's raw baseline (RawStoreOps), go-zookeeper's create
//     of an ephemeral node and its delete;
//   - zklock: go-zookeeper's own recipe, zk.NewLock's Lock and Unlock
//     (an ephemeral sequential node, the children listed, the node
//     deleted), on the backend's connection.
//
// It reports each one's cycles per second and the ratios:
//
//	go test ./dialects/zookeeper -run '^$' -bench CycleRatio -benchtime 5s
func BenchmarkCycleRatio(b *testing.B) {
	ctx := context.Background()
	be, err := Open(ctx, livetest.DSN(b, livetest.ZooKeeper))
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	tl, err := be.LeaseLocker(dialects.Table{Name: "schedlock_bench_ratio"})
	if err != nil {
		b.Fatal(err)
	}
	l := tl.(*Locker)
	if err := l.CreateTable(ctx); err != nil {
		b.Fatal(err)
	}
	defer l.DropTable(ctx)
	raw, err := be.RawStoreOps(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	zl := zk.NewLock(be.conn, be.cfg.Chroot+"/schedlock_bench_zklock", zk.WorldACL(zk.PermAll))
	defer deleteAll(be.conn, be.cfg.Chroot+"/schedlock_bench_zklock")
	opts := dialects.Options{Owner: "bench", AtMost: time.Minute}
	cycles := []dialecttest.Cycle{
		{Name: "engine", Run: func() error {
			lease, err := l.Acquire(ctx, "ratio", opts)
			if err != nil {
				return err
			}
			return lease.Release(ctx)
		}},
		{Name: "raw", Run: func() error {
			if _, err := raw.TryLock(ctx, "ratio"); err != nil {
				return err
			}
			return raw.Unlock(ctx, "ratio")
		}},
		{Name: "zklock", Run: func() error {
			if err := zl.Lock(); err != nil {
				return err
			}
			return zl.Unlock()
		}},
	}
	took := dialecttest.Interleave(b, cycles)
	b.ReportMetric(took["raw"]/took["engine"], "engine/raw")
	b.ReportMetric(took["zklock"]/took["engine"], "engine/zklock")
	b.ReportMetric(took["raw"]/took["zklock"], "zklock/raw")
}

// deleteAll deletes p's children and p.
func deleteAll(conn *zk.Conn, p string) {
	children, _, _ := conn.Children(p)
	for _, c := range children {
		_ = conn.Delete(p+"/"+c, -1)
	}
	_ = conn.Delete(p, -1)
}
