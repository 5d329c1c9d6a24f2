package redis_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/bsm/redislock"
	goredis "github.com/redis/go-redis/v9"

	"github.com/schedlock/schedlock/dialects"
)

// rawRelease is the textbook compare-and-delete release.
var rawRelease = goredis.NewScript(`if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) else return 0 end`)

// BenchmarkCycleRatio interleaves three lock cycles on the live Redis, one
// after the other in every iteration (in a random order each time, so that
// none always follows the same one), so that all three see the same load
// on a shared machine: the engine's
// acquire and release; the raw loop — SET key value NX PX and the Lua
// compare-and-delete, by EVALSHA; and bsm/redislock's Obtain and Release.
// All three use the backend's client, which run one after the other is
// one connection. It reports each
// one's cycles per second and the engine's ratio to the other two:
//
//	go test ./dialects/redis -run '^$' -bench CycleRatio -benchtime 10s -count 3
func BenchmarkCycleRatio(b *testing.B) {
	rb := openLive(b)
	ctx := context.Background()
	client := rb.Client()
	if err := rawRelease.Load(ctx, client).Err(); err != nil {
		b.Fatal(err)
	}
	locker := redislock.New(client)
	l, err := rb.Locker(dialects.StrategyTable, dialects.Table{Name: "schedlock_bench_ratio"})
	if err != nil {
		b.Fatal(err)
	}
	defer l.(dialects.TableDropper).DropTable(ctx)
	opts := dialects.Options{Owner: "bench", AtMost: time.Minute}
	const value = "bench-raw-owner"
	cycles := []struct {
		name  string
		cycle func() error
		took  time.Duration
	}{
		{name: "engine", cycle: func() error {
			lease, err := l.Acquire(ctx, "ratio", opts)
			if err != nil {
				return err
			}
			return lease.Release(ctx)
		}},
		{name: "raw", cycle: func() error {
			if err := client.SetArgs(ctx, "bench-raw:{ratio}", value, goredis.SetArgs{Mode: "NX", TTL: time.Minute}).Err(); err != nil {
				return err
			}
			return rawRelease.EvalSha(ctx, client, []string{"bench-raw:{ratio}"}, value).Err()
		}},
		{name: "redislock", cycle: func() error {
			lock, err := locker.Obtain(ctx, "bench-redislock:{ratio}", time.Minute, nil)
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
	b.ReportMetric(cycles[1].took.Seconds()/cycles[0].took.Seconds(), "engine/raw")
	b.ReportMetric(cycles[2].took.Seconds()/cycles[0].took.Seconds(), "engine/redislock")
}
