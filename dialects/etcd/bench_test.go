package etcd_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
	"github.com/schedlock/schedlock/dialects/etcd"
)

// BenchmarkCycle compares one lock cycle (acquire, release) of the engine
// with the raw clientv3 cycle of etcd.RawOps (a put-if-absent transaction
// and a delete) on the same client and lock name:
//
//	go test -run - -bench Cycle -benchtime 3s ./dialects/etcd/
func BenchmarkCycle(b *testing.B) {
	be := openLive(b)
	ctx := context.Background()
	name := "bench-" + dialects.NewOwner()
	b.Run("raw", func(b *testing.B) {
		raw, err := etcd.NewRawOps(ctx, be, 60)
		if err != nil {
			b.Fatal(err)
		}
		defer raw.Close()
		start := time.Now()
		for b.Loop() {
			ok, err := raw.TryLock(ctx, name)
			if err != nil || !ok {
				b.Fatalf("raw try-lock: %v, %v", ok, err)
			}
			if err := raw.Unlock(ctx, name); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "cycles/s")
	})
	b.Run("engine", func(b *testing.B) {
		l, err := be.Locker(dialects.StrategyTable, dialects.Table{})
		if err != nil {
			b.Fatal(err)
		}
		opts := dialects.Options{AtMost: time.Minute, Owner: "bench"}
		start := time.Now()
		for b.Loop() {
			lease, err := l.Acquire(ctx, name, opts)
			if err != nil {
				b.Fatal(err)
			}
			if err := lease.Release(ctx); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "cycles/s")
	})
}

// BenchmarkCycleRatio interleaves three lock cycles per iteration, in a
// random order, each timed on its own, on the backend's client, so that
// all three see the same load on a shared machine:
//
//   - engine: the engine's Acquire and Release;
//   - raw: etcd.RawOps, a put-if-absent transaction bound to a lease
//     granted once, and a delete;
//   - mutex: etcd's own concurrency.Mutex (the recipe of etcdctl lock) on
//     one session, TryLock and Unlock.
//
// It reports each one's cycles per second and the ratios:
//
//	go test -run - -bench CycleRatio -benchtime 5s ./dialects/etcd/
func BenchmarkCycleRatio(b *testing.B) {
	be := openLive(b)
	ctx := context.Background()
	raw, err := etcd.NewRawOps(ctx, be, 60)
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	l, err := be.Locker(dialects.StrategyTable, dialects.Table{})
	if err != nil {
		b.Fatal(err)
	}
	session, err := concurrency.NewSession(be.Client(), concurrency.WithTTL(60))
	if err != nil {
		b.Fatal(err)
	}
	defer session.Close()
	mutex := concurrency.NewMutex(session, be.Root()+"bench-mutex-"+dialects.NewOwner())
	rawName, engineName := "bench-raw-"+dialects.NewOwner(), "bench-engine-"+dialects.NewOwner()
	opts := dialects.Options{AtMost: time.Minute, Owner: "bench"}
	cycles := []dialecttest.Cycle{
		{Name: "engine", Run: func() error {
			lease, err := l.Acquire(ctx, engineName, opts)
			if err != nil {
				return err
			}
			return lease.Release(ctx)
		}},
		{Name: "raw", Run: func() error {
			if ok, err := raw.TryLock(ctx, rawName); err != nil || !ok {
				return fmt.Errorf("raw try-lock: %v, %w", ok, err)
			}
			return raw.Unlock(ctx, rawName)
		}},
		{Name: "mutex", Run: func() error {
			if err := mutex.TryLock(ctx); err != nil {
				return err
			}
			return mutex.Unlock(ctx)
		}},
	}
	took := dialecttest.Interleave(b, cycles)
	b.ReportMetric(took["raw"]/took["engine"], "engine/raw")
	b.ReportMetric(took["mutex"]/took["engine"], "engine/mutex")
	b.ReportMetric(took["raw"]/took["mutex"], "mutex/raw")
}

// BenchmarkRawVariants measures what the engine's cycle adds to the raw
// one, each variant interleaved with the others on one client: the raw
// cycle ("plain"), the same with a 150-byte value in the key ("value150",
// about the engine's owner record), and with the delete guarded by the
// create revision in a Txn ("txndelete", the engine's release):
//
//	go test -run - -bench RawVariants -benchtime 5s ./dialects/etcd/
func BenchmarkRawVariants(b *testing.B) {
	be := openLive(b)
	cli := be.Client()
	ctx := context.Background()
	g, err := cli.Grant(ctx, 60)
	if err != nil {
		b.Fatal(err)
	}
	defer cli.Revoke(context.Background(), g.ID)
	variant := func(value string, guarded bool) func() {
		pfx := be.Root() + "bench-variant-" + dialects.NewOwner() + "/"
		key := pfx + "1"
		return func() {
			resp, err := cli.Txn(ctx).
				If(clientv3.Compare(clientv3.CreateRevision(pfx), "=", 0).WithPrefix()).
				Then(clientv3.OpPut(key, value, clientv3.WithLease(g.ID))).
				Commit()
			if err != nil || !resp.Succeeded {
				b.Fatalf("put-if-absent: %v", err)
			}
			if guarded {
				_, err = cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", resp.Header.Revision)).Then(clientv3.OpDelete(key)).Commit()
			} else {
				_, err = cli.Delete(ctx, key)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	names := []string{"plain", "value150", "txndelete"}
	cycles := []func(){variant("", false), variant(strings.Repeat("x", 150), false), variant("", true)}
	times := make([]time.Duration, len(cycles))
	n := 0
	for b.Loop() {
		for i := range cycles {
			j := (i + n) % len(cycles) // each goes first in turn
			start := time.Now()
			cycles[j]()
			times[j] += time.Since(start)
		}
		n++
	}
	for i, name := range names {
		b.ReportMetric(float64(n)/times[i].Seconds(), name+"-cycles/s")
	}
}
