package redis

import (
	"context"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/bsm/redislock"

	"github.com/schedlock/schedlock/dialects"
)

// BenchmarkScriptsRatio separates the engine's scripts from the rest of
// the engine: it interleaves, in a random order every iteration, the
// engine's Acquire and Release, its acquire and release scripts called
// bare (what the round trips cost without the Go around them), and
// bsm/redislock's Obtain and Release, all on the backend's client:
//
//	go test ./dialects/redis -run '^$' -bench ScriptsRatio -benchtime 10s -count 3
func BenchmarkScriptsRatio(b *testing.B) {
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
	l, err := rb.Locker(dialects.StrategyTable, dialects.Table{Name: "schedlock_bench_scripts"})
	if err != nil {
		b.Fatal(err)
	}
	locker := l.(*Locker)
	defer locker.DropTable(ctx)
	rl := redislock.New(rb.client)
	opts := dialects.Options{Owner: "bench", AtMost: time.Minute}
	key := locker.layout.key("bare")
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
			v, err := acquireNative.Run(ctx, rb.client, []string{key, key + tokenSuffix}, "bench", ms(time.Minute)).Text()
			if err != nil {
				return err
			}
			return releaseExact.Run(ctx, rb.client, []string{key}, v, 0).Err()
		}},
		{name: "redislock", cycle: func() error {
			lock, err := rl.Obtain(ctx, "schedlock-bench-redislock:{scripts}", time.Minute, nil)
			if err != nil {
				return err
			}
			return lock.Release(ctx)
		}},
	}
	n := 0
	for b.Loop() {
		for _, i := range rand.Perm(len(cycles)) {
			c := &cycles[i]
			start := time.Now()
			if err := c.cycle(); err != nil {
				b.Fatalf("%s: %v", c.name, err)
			}
			c.took += time.Since(start)
		}
		n++
	}
	for _, c := range cycles {
		b.ReportMetric(float64(n)/c.took.Seconds(), c.name+"-cycles/s")
	}
	b.ReportMetric(cycles[2].took.Seconds()/cycles[0].took.Seconds(), "engine/redislock")
	b.ReportMetric(cycles[2].took.Seconds()/cycles[1].took.Seconds(), "scripts/redislock")
}
