package dialecttest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// RaceNode is the other side of RaceShedLock: one try of a ShedLock node
// (a store's simulator of its lock provider) at lock name for atMost.
// ok tells whether it took the lock; unlock, called only then, releases
// it.
type RaceNode func(ctx context.Context, name string, atMost time.Duration) (unlock func(context.Context) error, ok bool, err error)

// RaceRounds is how many rounds RaceShedLock runs.
const RaceRounds = 300

// RaceShedLock races l against node on one name at a time, for
// RaceRounds rounds on seven names (fmt.Sprintf(names, round%7)): in
// every round both try at once (l as owner "schedlock-node", both for
// ten seconds), the winner holds a short critical section, and an
// overlap detector counts the holders inside it. It fails t on any error
// but l's ErrHeld, on a double hold, and unless both sides won some
// rounds. ctx bounds the whole race.
func RaceShedLock(ctx context.Context, t testing.TB, l dialects.Locker, names string, node RaceNode) {
	t.Helper()
	const atMost = 10 * time.Second
	var inside, doubles, schedlockWins, shedlockWins atomic.Int64
	critical := func(wins *atomic.Int64) {
		if inside.Add(1) > 1 {
			doubles.Add(1)
		}
		wins.Add(1)
		time.Sleep(200 * time.Microsecond)
		inside.Add(-1)
	}
	for round := range RaceRounds {
		name := fmt.Sprintf(names, round%7)
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make(chan error, 2)
		wg.Go(func() {
			<-start
			lease, err := l.Acquire(ctx, name, dialects.Options{AtMost: atMost, Owner: "schedlock-node"})
			if errors.Is(err, dialects.ErrHeld) {
				return
			}
			if err != nil {
				errs <- err
				return
			}
			critical(&schedlockWins)
			if err := lease.Release(ctx); err != nil {
				errs <- err
			}
		})
		wg.Go(func() {
			<-start
			unlock, ok, err := node(ctx, name, atMost)
			if err != nil || !ok {
				if err != nil {
					errs <- err
				}
				return
			}
			critical(&shedlockWins)
			if err := unlock(ctx); err != nil {
				errs <- err
			}
		})
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	if d := doubles.Load(); d != 0 {
		t.Fatalf("%d double holds in %d rounds", d, RaceRounds)
	}
	if schedlockWins.Load() == 0 || shedlockWins.Load() == 0 {
		t.Fatalf("schedlock won %d rounds, ShedLock %d: want both to win some", schedlockWins.Load(), shedlockWins.Load())
	}
	t.Logf("%d rounds: schedlock held %d times, ShedLock %d times, 0 double holds", RaceRounds, schedlockWins.Load(), shedlockWins.Load())
}
