package etcd_test

import (
	"context"
	"testing"
	"time"

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
