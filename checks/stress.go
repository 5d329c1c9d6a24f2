package checks

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// Contention figures: workers split evenly over names, each worker runs
// sectionsPerWorker critical sections.
const (
	contentionWorkers = 8
	contentionNames   = 2
	sectionsPerWorker = 100
	race10Contenders  = 10
	race10Rounds      = 50
)

// checkContention runs 8 workers on 2 names. Each worker loops until it has
// done 100 critical sections: acquire without waiting (pausing briefly when
// the lock is held), read a per-name counter, sleep 1ms, write it back plus
// one, release. The read–sleep–write is deliberately not atomic as a whole:
// two holders at once lose an update, so the counters end below 400. The
// loads and stores are atomic only so the race detector does not flag the
// intended overlap.
func checkContention(ctx context.Context, env *Env, tg target) (string, error) {
	ls, err := tg.lockers(ctx, env, contentionWorkers)
	if err != nil {
		return "", err
	}
	names := make([]string, contentionNames)
	counters := make([]atomic.Int64, contentionNames)
	inside := make([]atomic.Int64, contentionNames)
	var overlaps, refusals atomic.Int64
	for i := range names {
		names[i] = env.Name(fmt.Sprintf("contention-%d", i))
	}

	var wg sync.WaitGroup
	errs := make([]error, contentionWorkers)
	start := time.Now()
	for w := range contentionWorkers {
		wg.Go(func() {
			n := w % contentionNames
			opts := dialects.Options{AtMost: time.Minute, Owner: env.Owner(fmt.Sprintf("worker%d", w))}
			for done := 0; done < sectionsPerWorker; {
				if err := ctx.Err(); err != nil {
					errs[w] = fmt.Errorf("worker %d stopped after %d sections: %w", w, done, err)
					return
				}
				lease, err := ls[w].Acquire(ctx, names[n], opts)
				if errors.Is(err, dialects.ErrHeld) {
					refusals.Add(1)
					_ = sleep(ctx, time.Duration(500+rand.IntN(1500))*time.Microsecond)
					continue
				}
				if err != nil {
					errs[w] = fmt.Errorf("worker %d, section %d: acquire: %w", w, done+1, err)
					return
				}
				if inside[n].Add(1) > 1 {
					overlaps.Add(1)
				}
				v := counters[n].Load()
				time.Sleep(time.Millisecond)
				counters[n].Store(v + 1)
				inside[n].Add(-1)
				if err := lease.Release(ctx); err != nil {
					errs[w] = fmt.Errorf("worker %d, section %d: release: %w", w, done+1, err)
					return
				}
				done++
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	want := int64(contentionWorkers / contentionNames * sectionsPerWorker)
	got := make([]int64, contentionNames)
	for i := range got {
		got[i] = counters[i].Load()
	}
	detail := fmt.Sprintf("counters %v (want %d each) in %s, %d refused tries", got, want, ms(took), refusals.Load())
	if n := overlaps.Load(); n > 0 {
		return detail, fmt.Errorf("two holders were inside a critical section at once %d times", n)
	}
	// A worker that stopped on an error did fewer sections: say why,
	// rather than blame the counters on overlapping holders.
	if err := errors.Join(errs...); err != nil {
		return detail, err
	}
	for i, g := range got {
		if g != want {
			return detail, fmt.Errorf("counter of %q is %d, want %d: updates were lost to overlapping holders", names[i], g, want)
		}
	}
	return detail, nil
}

// checkRace10 lets 10 contenders try one free name at the same instant, 50
// times; each round must have exactly one winner, who releases before the
// next round.
func checkRace10(ctx context.Context, env *Env, tg target) (string, error) {
	ls, err := tg.lockers(ctx, env, race10Contenders)
	if err != nil {
		return "", err
	}
	name := env.Name("race10")
	owners := make([]string, race10Contenders)
	for i := range owners {
		owners[i] = env.Owner(fmt.Sprintf("racer%d", i))
	}
	start := time.Now()
	for round := 1; round <= race10Rounds; round++ {
		if err := ctx.Err(); err != nil {
			return "", fmt.Errorf("round %d: %w", round, err)
		}
		leases := make([]dialects.Lease, race10Contenders)
		errs := make([]error, race10Contenders)
		gate := make(chan struct{})
		var wg sync.WaitGroup
		for i := range race10Contenders {
			wg.Go(func() {
				<-gate
				leases[i], errs[i] = ls[i].Acquire(ctx, name, dialects.Options{AtMost: time.Minute, Owner: owners[i]})
			})
		}
		close(gate)
		wg.Wait()

		var winners []dialects.Lease
		var failures []error
		for i := range race10Contenders {
			switch {
			case errs[i] == nil:
				winners = append(winners, env.Track(leases[i]))
			case !errors.Is(errs[i], dialects.ErrHeld):
				failures = append(failures, fmt.Errorf("contender %d: %w", i, errs[i]))
			}
		}
		for _, w := range winners {
			if err := w.Release(ctx); err != nil {
				failures = append(failures, fmt.Errorf("winner release: %w", err))
			}
		}
		switch {
		case len(winners) > 1:
			return "", fmt.Errorf("round %d: %d contenders got the lock at once", round, len(winners))
		case len(failures) > 0:
			return "", fmt.Errorf("round %d: %w", round, errors.Join(failures...))
		case len(winners) == 0:
			return "", fmt.Errorf("round %d: no contender got the free lock", round)
		}
	}
	return fmt.Sprintf("%d rounds of %d contenders, one winner each, in %s", race10Rounds, race10Contenders, ms(time.Since(start))), nil
}
