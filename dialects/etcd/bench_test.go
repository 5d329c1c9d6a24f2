package etcd_test

import (
	"context"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/schedlock/schedlock/dialects"
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

// BenchmarkCycleRatio interleaves one raw cycle and one engine cycle per
// iteration (each first every other time), so that both see the same load
// on a shared machine, and
// reports each one's cycles per second and engine/raw:
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
	rawName, engineName := "bench-raw-"+dialects.NewOwner(), "bench-engine-"+dialects.NewOwner()
	opts := dialects.Options{AtMost: time.Minute, Owner: "bench"}
	var rawTime, engineTime time.Duration
	n := 0
	rawCycle := func() {
		ok, err := raw.TryLock(ctx, rawName)
		if err != nil || !ok {
			b.Fatalf("raw try-lock: %v, %v", ok, err)
		}
		if err := raw.Unlock(ctx, rawName); err != nil {
			b.Fatal(err)
		}
	}
	engineCycle := func() {
		lease, err := l.Acquire(ctx, engineName, opts)
		if err != nil {
			b.Fatal(err)
		}
		if err := lease.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
	timed := func(total *time.Duration, cycle func()) {
		start := time.Now()
		cycle()
		*total += time.Since(start)
	}
	for b.Loop() {
		// Each goes first every other time, so neither gains from order.
		if n%2 == 0 {
			timed(&rawTime, rawCycle)
			timed(&engineTime, engineCycle)
		} else {
			timed(&engineTime, engineCycle)
			timed(&rawTime, rawCycle)
		}
		n++
	}
	b.ReportMetric(float64(n)/rawTime.Seconds(), "raw-cycles/s")
	b.ReportMetric(float64(n)/engineTime.Seconds(), "engine-cycles/s")
	b.ReportMetric(rawTime.Seconds()/engineTime.Seconds(), "engine/raw")
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
