package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/benchkit"
)

// BenchmarkCycles runs b.N engine lock cycles and, beside them, b.N raw
// SET NX PX + Lua compare-and-delete cycles (the bench support's raw
// commands) on the live Redis:
//
//	go test ./dialects/redis -run '^$' -bench Cycles -benchtime 5000x
func BenchmarkCycles(b *testing.B) {
	rb := openLive(b)
	ctx := context.Background()
	b.Run("engine", func(b *testing.B) {
		l, err := rb.Locker(dialects.StrategyTable, dialects.Table{Name: "schedlock_bench_go"})
		if err != nil {
			b.Fatal(err)
		}
		defer l.(dialects.TableDropper).DropTable(ctx)
		opts := dialects.Options{Owner: "bench", AtMost: time.Minute}
		b.ResetTimer()
		for range b.N {
			lease, err := l.Acquire(ctx, "cycle", opts)
			if err != nil {
				b.Fatal(err)
			}
			if err := lease.Release(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("raw", func(b *testing.B) {
		rep, err := benchkit.Run(ctx, rb, benchkit.Plan{Cycles: true, Budget: benchkit.Budget{Cycles: int64(b.N)}})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(rep.Cycles[0].Raw.CyclesPerSecond, "raw-cycles/s")
		b.ReportMetric(rep.Cycles[0].Engine.CyclesPerSecond, "engine-cycles/s")
		b.ReportMetric(*rep.Cycles[0].EngineToRaw, "engine/raw")
	})
}
