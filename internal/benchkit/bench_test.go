package benchkit_test

import (
	"context"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	_ "github.com/schedlock/schedlock/dialects/all"
	"github.com/schedlock/schedlock/dialects/sqlkit"
	"github.com/schedlock/schedlock/internal/benchkit"
	"github.com/schedlock/schedlock/internal/dsn"
	"github.com/schedlock/schedlock/internal/livetest"
)

// The benchmarks run the kernel of `schedlock bench` on every server whose
// DSN is set, with b.N cycles per measurement:
//
//	go test ./internal/benchkit -run '^$' -bench . -benchtime 2000x
var benchServers = []struct{ name, env string }{
	{"postgres", "SCHEDLOCK_TEST_POSTGRES_DSN"},
	{"mysql", "SCHEDLOCK_TEST_MYSQL_DSN"},
}

// forEachServer runs fn as a sub-benchmark on each configured server, and
// on a SQLite file.
func forEachServer(b *testing.B, fn func(b *testing.B, db dialects.Backend)) {
	servers := append([]struct{ name, env string }{}, benchServers...)
	servers = append(servers, struct{ name, env string }{"sqlite", ""})
	for _, s := range servers {
		b.Run(s.name, func(b *testing.B) {
			raw := b.TempDir() + "/bench.db"
			if s.env != "" {
				raw = livetest.DSN(b, s.env)
			}
			d, err := dsn.Parse(raw)
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			backend, err := d.Connect(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer backend.Close()
			if _, ok := sqlkit.Of(backend); !ok {
				b.Fatalf("%T is not a SQL backend", backend)
			}
			fn(b, backend)
		})
	}
}

// run runs plan with b.N cycles per measurement and returns its report.
func run(b *testing.B, db dialects.Backend, plan benchkit.Plan) *benchkit.Report {
	b.Helper()
	plan.Budget = benchkit.Budget{Cycles: int64(b.N)}
	b.ResetTimer()
	rep, err := benchkit.Run(context.Background(), db, plan)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	return rep
}

// BenchmarkCycles reports round trips, raw session-lock cycles and engine
// cycles per strategy, per second.
func BenchmarkCycles(b *testing.B) {
	forEachServer(b, func(b *testing.B, db dialects.Backend) {
		rep := run(b, db, benchkit.Plan{Cycles: true})
		b.ReportMetric(rep.RoundTrip.CyclesPerSecond, "roundtrips/s")
		for _, c := range rep.Cycles {
			b.ReportMetric(c.Engine.CyclesPerSecond, c.Strategy+"-cycles/s")
			if c.Raw != nil {
				b.ReportMetric(c.Raw.CyclesPerSecond, c.Strategy+"-raw-cycles/s")
			}
		}
	})
}

// BenchmarkContention8 reports critical sections per second of 8 workers
// on one name: engine trying, raw statements, engine waiting.
func BenchmarkContention8(b *testing.B) {
	forEachServer(b, func(b *testing.B, db dialects.Backend) {
		rep := run(b, db, benchkit.Plan{Workers: 8})
		for _, c := range rep.Contention {
			b.ReportMetric(c.Engine.SuccessesPerSecond, c.Strategy+"-successes/s")
			b.ReportMetric(c.EngineWaiting.SuccessesPerSecond, c.Strategy+"-waiting-successes/s")
			if c.Raw != nil {
				b.ReportMetric(c.Raw.SuccessesPerSecond, c.Strategy+"-raw-successes/s")
			}
		}
	})
}

// BenchmarkHandOver reports the median latency from a release to the
// waiter's acquire, b.N hand-overs per strategy.
func BenchmarkHandOver(b *testing.B) {
	forEachServer(b, func(b *testing.B, db dialects.Backend) {
		rep := run(b, db, benchkit.Plan{HandOver: true})
		for _, h := range rep.HandOver {
			b.ReportMetric(h.MedianMS, h.Strategy+"-median-ms")
			b.ReportMetric(h.P99MS, h.Strategy+"-p99-ms")
		}
	})
}
