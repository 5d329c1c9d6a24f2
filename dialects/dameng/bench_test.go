package dameng

import (
	"context"
	"errors"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

// The benchmarks run against the live server (SCHEDLOCK_TEST_DAMENG_DSN,
// built with -tags dameng) and report cycles/s, to compare with the
// physical limit: one round trip of SELECT 1 FROM DUAL on one pinned
// connection. A session cycle is two round trips (the REQUEST block and
// the RELEASE block); a table cycle is the MERGE and the release UPDATE,
// plus one Inspect for the token on the native table
// (TestRoundTripsPerCycle counts them on the simulator).

func BenchmarkSelectFromDual(b *testing.B) {
	db := liveDB(b)
	ctx := context.Background()
	c, err := db.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	var one int64
	b.ResetTimer()
	for b.Loop() {
		if err := c.QueryRowContext(ctx, "SELECT 1 FROM DUAL").Scan(&one); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
}

func BenchmarkSessionCycle(b *testing.B) {
	db := liveDetected(b)
	l, err := db.SessionLocker()
	if errors.Is(err, dialects.ErrUnsupported) {
		b.Skipf("no session strategy on this server: %v", err)
	}
	if err != nil {
		b.Fatal(err)
	}
	benchCycles(b, l, "schedlock-bench-session")
}

func BenchmarkTableCycle(b *testing.B) {
	db := liveDetected(b)
	for _, preset := range dialects.Presets() {
		b.Run(preset, func(b *testing.B) {
			tl, err := db.TableLocker(dialects.Table{Preset: preset, Name: uniqueName("sl_bench_")})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if err := tl.CreateTable(ctx); err != nil {
				b.Fatal(err)
			}
			defer func() { _ = tl.(dialects.TableDropper).DropTable(ctx) }()
			benchCycles(b, tl, "schedlock-bench-table")
		})
	}
}

// benchCycles acquires and releases name b.N times.
func benchCycles(b *testing.B, l dialects.Locker, name string) {
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		lease, err := l.Acquire(ctx, name, dialects.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := lease.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
}
