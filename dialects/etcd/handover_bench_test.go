package etcd_test

import (
	"context"
	"testing"
	"time"

	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/benchkit"
)

// BenchmarkHandOver measures the hand-over from a holder's release to a
// waiter's acquire, holder and waiter each on a backend (a client) of
// its own, one hand-over of each lock per iteration in a random order:
//
//   - engine: the engine's waiting Acquire (woken by its watch);
//   - mutex: etcd's concurrency.Mutex Lock, each on a session of its
//     own (a watch on the key ahead).
//
// It reports each one's median and p90 in milliseconds:
//
//	go test ./dialects/etcd -run '^$' -bench HandOver -benchtime 60x
func BenchmarkHandOver(b *testing.B) {
	ctx := context.Background()
	holderB, waiterB := openLive(b), openLive(b)
	holderL, err := holderB.Locker(dialects.StrategyTable, dialects.Table{})
	if err != nil {
		b.Fatal(err)
	}
	waiterL, err := waiterB.Locker(dialects.StrategyTable, dialects.Table{})
	if err != nil {
		b.Fatal(err)
	}
	name := "bench-handover-" + dialects.NewOwner()
	engine := func(l dialects.Locker, wait time.Duration) benchkit.Take {
		return func(ctx context.Context) (func(context.Context) error, error) {
			lease, err := l.Acquire(ctx, name, dialects.Options{Owner: "bench", AtMost: time.Minute, Wait: wait})
			if err != nil {
				return nil, err
			}
			return lease.Release, nil
		}
	}
	pfx := holderB.Root() + "bench-handover-mutex-" + dialects.NewOwner()
	mutex := func(s *concurrency.Session) benchkit.Take {
		return func(ctx context.Context) (func(context.Context) error, error) {
			m := concurrency.NewMutex(s, pfx)
			if err := m.Lock(ctx); err != nil {
				return nil, err
			}
			return m.Unlock, nil
		}
	}
	holderS, err := concurrency.NewSession(holderB.Client(), concurrency.WithTTL(60))
	if err != nil {
		b.Fatal(err)
	}
	defer holderS.Close()
	waiterS, err := concurrency.NewSession(waiterB.Client(), concurrency.WithTTL(60))
	if err != nil {
		b.Fatal(err)
	}
	defer waiterS.Close()
	peers := []benchkit.HandOverPeer{
		{Name: "engine", Holder: engine(holderL, 0), Waiter: engine(waiterL, time.Minute)},
		{Name: "mutex", Holder: mutex(holderS), Waiter: mutex(waiterS)},
	}
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
