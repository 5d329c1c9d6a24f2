package dialecttest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// BenchManyLocks holds n locks at once through l, then releases them, and
// reports the seconds to take and to release them all, the lock
// connections used (when l reports them) and the client heap they took.
// Acquires and releases run from 64 goroutines.
func BenchManyLocks(b *testing.B, l dialects.Locker, prefix string, n int) {
	ctx := context.Background()
	for range b.N {
		runtime.GC()
		var before, held runtime.MemStats
		runtime.ReadMemStats(&before)
		leases := make([]dialects.Lease, n)
		start := time.Now()
		parallel(b, n, func(i int) error {
			var err error
			leases[i], err = l.Acquire(ctx, fmt.Sprintf("%s-%d", prefix, i), dialects.Options{Owner: "bench"})
			return err
		})
		took := time.Since(start)
		runtime.GC()
		runtime.ReadMemStats(&held)
		conns := -1
		if c, ok := l.(interface{ Conns() int }); ok {
			conns = c.Conns()
		}
		start = time.Now()
		parallel(b, n, func(i int) error { return leases[i].Release(ctx) })
		released := time.Since(start)
		b.ReportMetric(took.Seconds(), "s-take")
		b.ReportMetric(released.Seconds(), "s-release")
		b.ReportMetric(float64(conns), "conns")
		b.ReportMetric(float64(int64(held.HeapAlloc)-int64(before.HeapAlloc))/(1<<20), "MB-heap")
	}
}

// parallel runs fn(0..n-1) on 64 goroutines and fails b on an error.
func parallel(b *testing.B, n int, fn func(i int) error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range 64 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					once.Do(func() { first = fmt.Errorf("lock %d: %w", i, err) })
					return
				}
			}
		})
	}
	wg.Wait()
	if first != nil {
		b.Fatal(first)
	}
}

// BenchContended runs workers goroutines, each with its own locker from
// newLocker (as separate processes would), doing critical sections on one
// name for the benchmark's time: try, and on a refusal try again at once.
// It reports successful critical sections per second.
func BenchContended(b *testing.B, workers int, newLocker func() dialects.Locker, name string, wait time.Duration) {
	ctx := context.Background()
	lockers := make([]dialects.Locker, workers)
	for i := range lockers {
		lockers[i] = newLocker()
	}
	var sections atomic.Int64
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	per := b.N
	for w := range workers {
		wg.Go(func() {
			for done := 0; done < per; {
				lease, err := lockers[w].Acquire(ctx, name, dialects.Options{Owner: "bench", Wait: wait})
				if err != nil {
					continue
				}
				if err := lease.Release(ctx); err != nil {
					b.Error(err)
					return
				}
				done++
				sections.Add(1)
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(sections.Load())/time.Since(start).Seconds(), "sections/s")
}

// Cycle is one lock cycle an interleaved benchmark compares: the
// engine's, a raw baseline's or a peer's.
type Cycle struct {
	Name string
	Run  func() error
}

// Interleave runs every cycle once per iteration of b, in a random order
// each time, so that all of them see the same load; it reports each one's
// cycles per second (NAME-cycles/s) and returns the seconds each took in
// all, by name, for the caller's ratios.
func Interleave(b *testing.B, cycles []Cycle) map[string]float64 {
	b.Helper()
	took := make([]time.Duration, len(cycles))
	n := 0
	for b.Loop() {
		for _, i := range rand.Perm(len(cycles)) {
			start := time.Now()
			if err := cycles[i].Run(); err != nil {
				b.Fatalf("%s: %v", cycles[i].Name, err)
			}
			took[i] += time.Since(start)
		}
		n++
	}
	seconds := map[string]float64{}
	for i, c := range cycles {
		b.ReportMetric(float64(n)/took[i].Seconds(), c.Name+"-cycles/s")
		seconds[c.Name] = took[i].Seconds()
	}
	return seconds
}
