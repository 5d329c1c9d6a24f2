package benchkit

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// cutOffLocker is an in-memory session-style locker whose Acquire, like a
// statement cut off after the server ran it, takes a free lock even when
// its context ends during the call, and then reports the context's error.
type cutOffLocker struct {
	mu   sync.Mutex
	held map[string]bool
}

func (l *cutOffLocker) Strategy() dialects.Strategy { return dialects.StrategySession }

func (l *cutOffLocker) take(name string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[name] {
		return false
	}
	l.held[name] = true
	return true
}

func (l *cutOffLocker) Acquire(ctx context.Context, name string, opts dialects.Options) (dialects.Lease, error) {
	deadline := time.Now().Add(opts.Wait)
	for {
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Microsecond): // the round trip
		}
		if l.take(name) {
			if ctx.Err() != nil {
				return nil, ctx.Err() // taken on the "server", lost to the caller
			}
			return &fakeLease{l: l, name: name}, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !time.Now().Before(deadline) {
			return nil, &dialects.HeldError{Name: name}
		}
	}
}

type fakeLease struct {
	dialects.Lease
	l    *cutOffLocker
	name string
}

func (f *fakeLease) Release(context.Context) error {
	f.l.mu.Lock()
	defer f.l.mu.Unlock()
	delete(f.l.held, f.name)
	return nil
}

// A measurement that tries without waiting must not cut off its workers
// when the budget is spent: a cut-off acquire can leave the lock held,
// and the next measurement on the name would wait for it forever.
func TestTryContentionLeavesTheNameFree(t *testing.T) {
	l := &cutOffLocker{held: map[string]bool{}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	lockers := []dialects.Locker{l, l, l, l, l, l, l, l}
	for round := 0; round < 20; round++ {
		c, err := EngineContention(ctx, lockers, "n", dialects.Options{}, Budget{Cycles: 50})
		if err != nil || c.Successes < 50 {
			t.Fatalf("round %d: %+v %v", round, c, err)
		}
		if l.held["n"] {
			t.Fatalf("round %d: the try measurement left the lock held", round)
		}
	}
	w, err := EngineWaitingContention(ctx, lockers, "n", dialects.Options{}, Budget{Cycles: 50})
	if err != nil || w.Successes < 50 {
		t.Fatalf("waiting contention after the try rounds: %+v %v", w, err)
	}
}
