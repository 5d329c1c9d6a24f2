package redis

import (
	"context"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/bsm/redislock"
	goredis "github.com/redis/go-redis/v9"

	"github.com/schedlock/schedlock/dialects"
)

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
	dsn := os.Getenv("SCHEDLOCK_TEST_REDIS_DSN")
	if dsn == "" {
		b.Skip("SCHEDLOCK_TEST_REDIS_DSN is not set")
	}
	ctx := context.Background()
	rb, err := Open(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer rb.Close()
	l, err := rb.Locker(dialects.StrategyTable, dialects.Table{Name: "schedlock_bench_ratio"})
	if err != nil {
		b.Fatal(err)
	}
	locker := l.(*Locker)
	defer locker.DropTable(ctx)
	c := rb.client
	if err := rawRelease.Load(ctx, c).Err(); err != nil {
		b.Fatal(err)
	}
	rl := redislock.New(c)
	opts := dialects.Options{Owner: "bench", AtMost: time.Minute}
	bare := locker.layout.lockKeys("bare")
	const rawKey, rawValue = "schedlock-bench-raw:{ratio}", "bench-raw-owner"
	cycles := []struct {
		name  string
		cycle func() error
		took  time.Duration
	}{
		{name: "engine", cycle: func() error {
			lease, err := locker.Acquire(ctx, "engine", opts)
			if err != nil {
				return err
			}
			return lease.Release(ctx)
		}},
		{name: "scripts", cycle: func() error {
			v, err := acquireNative.Run(ctx, c, bare, "bench", ms(time.Minute)).Text()
			if err != nil {
				return err
			}
			return releaseExact.Run(ctx, c, bare[:1], v, 0).Err()
		}},
		{name: "raw", cycle: func() error {
			if err := c.SetArgs(ctx, rawKey, rawValue, goredis.SetArgs{Mode: "NX", TTL: time.Minute}).Err(); err != nil {
				return err
			}
			return rawRelease.EvalSha(ctx, c, []string{rawKey}, rawValue).Err()
		}},
		{name: "redislock", cycle: func() error {
			lock, err := rl.Obtain(ctx, "schedlock-bench-redislock:{ratio}", time.Minute, nil)
			if err != nil {
				return err
			}
			return lock.Release(ctx)
		}},
	}
	n := 0
	for b.Loop() {
		for _, i := range rand.Perm(len(cycles)) {
			cy := &cycles[i]
			start := time.Now()
			if err := cy.cycle(); err != nil {
				b.Fatalf("%s: %v", cy.name, err)
			}
			cy.took += time.Since(start)
		}
		n++
	}
	took := map[string]float64{}
	for _, cy := range cycles {
		b.ReportMetric(float64(n)/cy.took.Seconds(), cy.name+"-cycles/s")
		took[cy.name] = cy.took.Seconds()
	}
	b.ReportMetric(took["raw"]/took["engine"], "engine/raw")
	b.ReportMetric(took["redislock"]/took["engine"], "engine/redislock")
	b.ReportMetric(took["redislock"]/took["scripts"], "scripts/redislock")
	b.ReportMetric(took["raw"]/took["redislock"], "redislock/raw")
}
