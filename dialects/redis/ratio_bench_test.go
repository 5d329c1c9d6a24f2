package redis

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bsm/redislock"
	goredis "github.com/redis/go-redis/v9"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
	"github.com/schedlock/schedlock/internal/livetest"
)

// benchCycle is one lock cycle the benchmarks compare.
type benchCycle struct {
	name  string
	cycle func() error
	// topLevel lists the commands of the cycle that the client sends
	// (INFO commandstats counts the commands a script calls too).
	topLevel []string
}

// liveCycles opens the live Redis and returns the four cycles the
// benchmarks compare, all on the backend's one client: engine, scripts,
// raw, redislock (see BenchmarkCycleRatio).
func liveCycles(b *testing.B) (c goredis.UniversalClient, cycles []benchCycle) {
	dsn := livetest.DSN(b, livetest.Redis)
	ctx := context.Background()
	rb, err := Open(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rb.Close() })
	l, err := rb.Locker(dialects.StrategyTable, dialects.Table{Name: "schedlock_bench_ratio"})
	if err != nil {
		b.Fatal(err)
	}
	locker := l.(*Locker)
	b.Cleanup(func() { locker.DropTable(ctx) })
	c = rb.client
	if err := rawRelease.Load(ctx, c).Err(); err != nil {
		b.Fatal(err)
	}
	rl := redislock.New(c)
	opts := dialects.Options{Owner: "bench", AtMost: time.Minute}
	bare := locker.layout.lockKeys("bare")
	const rawKey, rawValue = "schedlock-bench-raw:{ratio}", "bench-raw-owner"
	return c, []benchCycle{
		{name: "engine", topLevel: []string{"evalsha"}, cycle: func() error {
			lease, err := locker.Acquire(ctx, "engine", opts)
			if err != nil {
				return err
			}
			return lease.Release(ctx)
		}},
		{name: "scripts", topLevel: []string{"evalsha"}, cycle: func() error {
			v, ident := newNativeValue("bench", ms(time.Minute))
			if err := acquireNative.Run(ctx, c, bare, v, ms(time.Minute)).Err(); err != nil {
				return err
			}
			return releaseValue.Run(ctx, c, bare, ident, 0).Err()
		}},
		{name: "raw", topLevel: []string{"set", "evalsha"}, cycle: func() error {
			if err := c.SetArgs(ctx, rawKey, rawValue, goredis.SetArgs{Mode: "NX", TTL: time.Minute}).Err(); err != nil {
				return err
			}
			return rawRelease.EvalSha(ctx, c, []string{rawKey}, rawValue).Err()
		}},
		{name: "redislock", topLevel: []string{"evalsha"}, cycle: func() error {
			lock, err := rl.Obtain(ctx, "schedlock-bench-redislock:{ratio}", time.Minute, nil)
			if err != nil {
				return err
			}
			return lock.Release(ctx)
		}},
	}
}

// BenchmarkCycleRatio interleaves four lock cycles on the live Redis, one
// after the other in every iteration, in a random order each time (so
// that none always follows the same one), all on the backend's client —
// one connection, as they run one at a time — so that all four see the
// same load on a shared machine:
//
//   - engine: the engine's Acquire and Release;
//   - scripts: the engine's acquire and release scripts called bare, what
//     its round trips cost without the Go around them;
//   - raw: SET key value NX PX and the Lua compare-and-delete by EVALSHA
//     (rawRelease, as `schedlock bench` runs them);
//   - redislock: bsm/redislock's Obtain and Release.
//
// It reports each one's cycles per second and the ratios:
//
//	go test ./dialects/redis -run '^$' -bench CycleRatio -benchtime 10s -count 5
func BenchmarkCycleRatio(b *testing.B) {
	_, cycles := liveCycles(b)
	interleaved := make([]dialecttest.Cycle, len(cycles))
	for i, cy := range cycles {
		interleaved[i] = dialecttest.Cycle{Name: cy.name, Run: cy.cycle}
	}
	took := dialecttest.Interleave(b, interleaved)
	b.ReportMetric(took["raw"]/took["engine"], "engine/raw")
	b.ReportMetric(took["redislock"]/took["engine"], "engine/redislock")
	b.ReportMetric(took["redislock"]/took["scripts"], "scripts/redislock")
	b.ReportMetric(took["raw"]/took["redislock"], "redislock/raw")
}

// BenchmarkServerTime is what each cycle of BenchmarkCycleRatio costs the
// server: the microseconds INFO commandstats adds up for the commands the
// client sends (the scripts' own commands included), per cycle, read
// before and after b.N cycles of one kind. It is the server's share of a
// cycle's time — the part a faster client or network cannot remove:
//
//	go test ./dialects/redis -run '^$' -bench ServerTime -benchtime 20000x -count 3
func BenchmarkServerTime(b *testing.B) {
	c, cycles := liveCycles(b)
	for _, cy := range cycles {
		b.Run(cy.name, func(b *testing.B) {
			before := serverMicros(b, c, cy.topLevel)
			for b.Loop() {
				if err := cy.cycle(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(serverMicros(b, c, cy.topLevel)-before)/float64(b.N), "server-µs/cycle")
		})
	}
}

// serverMicros is the total usec INFO commandstats reports for commands.
func serverMicros(b *testing.B, c goredis.UniversalClient, commands []string) int64 {
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	var total int64
	for _, line := range strings.Split(info, "\n") {
		for _, cmd := range commands {
			// cmdstat_evalsha:calls=3,usec=12,usec_per_call=4.00,...
			rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+cmd+":")
			if !ok {
				continue
			}
			for _, field := range strings.Split(rest, ",") {
				if v, ok := strings.CutPrefix(field, "usec="); ok {
					n, err := strconv.ParseInt(v, 10, 64)
					if err != nil {
						b.Fatalf("commandstats %q: %v", line, err)
					}
					total += n
				}
			}
		}
	}
	return total
}
