package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/bsm/redislock"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/benchkit"
)

// BenchmarkHandOver measures the hand-over from a holder's release to a
// waiter's acquire, holder and waiter each on a backend (a client) of
// its own, one hand-over of each lock per iteration in a random order:
//
//   - engine: the engine's waiting Acquire (woken by the release);
//   - redislock: bsm/redislock's Obtain retrying every 10 ms
//     (LinearBackoff), its way of waiting.
//
// It reports each one's median and p90 in milliseconds:
//
//	go test ./dialects/redis -run '^$' -bench HandOver -benchtime 60x
func BenchmarkHandOver(b *testing.B) {
	ctx := context.Background()
	holderB, waiterB := openLive(b), openLive(b)
	table := dialects.Table{Name: "schedlock_bench_handover"}
	holderL, err := holderB.Locker(dialects.StrategyTable, table)
	if err != nil {
		b.Fatal(err)
	}
	waiterL, err := waiterB.Locker(dialects.StrategyTable, table)
	if err != nil {
		b.Fatal(err)
	}
	defer holderL.(dialects.TableDropper).DropTable(ctx)
	engine := func(l dialects.Locker, wait time.Duration) benchkit.Take {
		return func(ctx context.Context) (func(context.Context) error, error) {
			lease, err := l.Acquire(ctx, "handover", dialects.Options{Owner: "bench", AtMost: time.Minute, Wait: wait})
			if err != nil {
				return nil, err
			}
			return lease.Release, nil
		}
	}
	holderRL, waiterRL := redislock.New(holderB.Client()), redislock.New(waiterB.Client())
	const rlKey = "schedlock-bench-redislock:{handover}"
	redisLock := func(c *redislock.Client, retry redislock.RetryStrategy) benchkit.Take {
		return func(ctx context.Context) (func(context.Context) error, error) {
			wctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			lock, err := c.Obtain(wctx, rlKey, time.Minute, &redislock.Options{RetryStrategy: retry})
			if err != nil {
				return nil, err
			}
			return lock.Release, nil
		}
	}
	peers := []benchkit.HandOverPeer{
		{Name: "engine", Holder: engine(holderL, 0), Waiter: engine(waiterL, time.Minute)},
		{Name: "redislock", Holder: redisLock(holderRL, redislock.NoRetry()), Waiter: redisLock(waiterRL, redislock.LinearBackoff(10*time.Millisecond))},
	}
	reportHandOvers(b, ctx, peers)
}

// reportHandOvers runs b.N hand-overs of each peer (benchkit.HandOverTurns)
// and reports their medians and p90s.
func reportHandOvers(b *testing.B, ctx context.Context, peers []benchkit.HandOverPeer) {
	b.ResetTimer()
	res, err := benchkit.HandOverTurns(ctx, peers, b.N)
	if err != nil {
		b.Fatal(err)
	}
	for _, h := range res {
		b.ReportMetric(h.MedianMS, h.Strategy+"-median-ms")
		b.ReportMetric(h.P90MS, h.Strategy+"-p90-ms")
	}
}
