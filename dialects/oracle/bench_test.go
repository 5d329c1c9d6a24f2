package oracle

import (
	"context"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

// The benchmarks run against the live server (SCHEDLOCK_TEST_ORACLE_DSN)
// and report cycles/s, to compare with the physical limit: one round trip
// of SELECT 1 FROM dual on one pinned connection. A session cycle is two
// round trips (the REQUEST block and the RELEASE block); a table cycle is
// the MERGE and the release UPDATE, plus one Inspect for the token on the
// native table.

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
		if err := c.QueryRowContext(ctx, "SELECT 1 FROM dual").Scan(&one); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
}

func BenchmarkSessionCycle(b *testing.B) {
	db := liveDetected(b)
	l, err := db.SessionLocker()
	if err != nil {
		b.Fatal(err)
	}
	benchCycles(b, l, "schedlock-bench-session")
}

func BenchmarkTableCycle(b *testing.B) {
	db := liveDetected(b)
	for _, t := range shortTables() {
		b.Run(t.Preset, func(b *testing.B) {
			tl, err := db.TableLocker(t)
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
