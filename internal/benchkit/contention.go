package benchkit

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// Contended is one contended measurement: workers loop on one name, each
// success is an (empty) critical section, each refusal a try that found
// the lock taken.
type Contended struct {
	Successes          int64   `json:"successes"`
	Refusals           int64   `json:"refusals"`
	Seconds            float64 `json:"seconds"`
	SuccessesPerSecond float64 `json:"successes_per_second"`
	RefusalsPerSecond  float64 `json:"refusals_per_second"`
}

func newContended(successes, refusals int64, elapsed time.Duration) Contended {
	c := Contended{Successes: successes, Refusals: refusals, Seconds: round(elapsed.Seconds(), 6)}
	if s := elapsed.Seconds(); s > 0 {
		c.SuccessesPerSecond = round(float64(successes)/s, 1)
		c.RefusalsPerSecond = round(float64(refusals)/s, 1)
	}
	return c
}

// tally counts the outcomes of the workers of one contended measurement.
type tally struct {
	m        *meter
	refusals atomic.Int64
	errOnce  sync.Once
	err      error
	cancel   context.CancelFunc // ends the measurement early
	// interrupt: the last success cuts off the workers still waiting.
	interrupt bool
}

func (t *tally) fail(err error) {
	t.errOnce.Do(func() { t.err = err })
	t.cancel()
}

// contend runs workers copies of work until the budget is spent, the
// first error, or ctx's end. With interrupt, the context given to work
// also ends when the budget is spent, which cuts off waiting acquires;
// without it, only an error ends it early, so that no statement is cut off
// half-way (a cut-off acquire may have taken the lock on the server).
func contend(ctx context.Context, workers int, b Budget, interrupt bool, work func(ctx context.Context, worker int, t *tally)) (Contended, error) {
	m := b.begin()
	mctx, cancel := context.WithCancel(ctx)
	if interrupt {
		mctx, cancel = context.WithTimeout(ctx, m.remaining())
	}
	defer cancel()
	t := &tally{m: m, cancel: cancel, interrupt: interrupt}
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work(mctx, i, t)
		}()
	}
	wg.Wait()
	elapsed := time.Since(m.start)
	if t.err == nil && ctx.Err() != nil {
		t.err = ctx.Err()
	}
	return newContended(m.done.Load(), t.refusals.Load(), elapsed), t.err
}

// success counts one critical section; with interrupt, the last one the
// budget allows cuts off the workers still waiting.
func (t *tally) success() {
	if t.m.add() && t.interrupt {
		t.cancel()
	}
}

// EngineContention measures one goroutine per locker (lockers[i] is worker
// i's) trying, without waiting, to take name and releasing it at once.
// Each worker has a locker of its own, as separate processes would: the
// workers then meet on the server, as the raw loop's connections do.
// (Workers sharing one session locker meet in process instead, where a
// refusal costs no round trip and a worker retrying at once only spins.)
func EngineContention(ctx context.Context, lockers []dialects.Locker, name string, opts dialects.Options, b Budget) (Contended, error) {
	opts.Wait = 0
	return contend(ctx, len(lockers), b, false, func(mctx context.Context, worker int, t *tally) {
		opts, locker := workerOptions(opts, worker), lockers[worker]
		for t.m.more() && mctx.Err() == nil {
			lease, err := locker.Acquire(mctx, name, opts)
			switch {
			case isHeld(err):
				t.refusals.Add(1)
				continue
			case err != nil && mctx.Err() != nil:
				return
			case err != nil:
				t.fail(fmt.Errorf("acquire: %w", err))
				return
			}
			if err := lease.Release(context.WithoutCancel(mctx)); err != nil {
				t.fail(fmt.Errorf("release: %w", err))
				return
			}
			t.success()
		}
	})
}

// EngineWaitingContention measures one goroutine per locker, each waiting
// for name (opts.Wait, handOverWait when zero) and releasing it at once: contended
// throughput when every worker waits instead of retrying. The waits still
// running when the budget is spent are cut off and not counted; one that
// runs out is a refusal.
func EngineWaitingContention(ctx context.Context, lockers []dialects.Locker, name string, opts dialects.Options, b Budget) (Contended, error) {
	if opts.Wait <= 0 {
		opts.Wait = handOverWait
	}
	return contend(ctx, len(lockers), b, true, func(mctx context.Context, worker int, t *tally) {
		opts, locker := workerOptions(opts, worker), lockers[worker]
		for t.m.more() && mctx.Err() == nil {
			lease, err := locker.Acquire(mctx, name, opts)
			switch {
			case err != nil && mctx.Err() != nil:
				return
			case isHeld(err):
				t.refusals.Add(1)
				continue
			case err != nil:
				t.fail(fmt.Errorf("acquire: %w", err))
				return
			}
			if err := lease.Release(context.WithoutCancel(mctx)); err != nil {
				t.fail(fmt.Errorf("release: %w", err))
				return
			}
			t.success()
		}
	})
}

// RawContention measures workers driver connections (open gives each
// its raw statements) looping on the raw TryLock of name, and Unlock
// after each success.
func RawContention(ctx context.Context, open func(ctx context.Context) (SessionOps, error), name string, workers int, b Budget) (Contended, error) {
	conns, closeAll, err := openRaw(ctx, open, workers)
	defer closeAll()
	if err != nil {
		return Contended{}, err
	}
	return contend(ctx, workers, b, false, func(mctx context.Context, worker int, t *tally) {
		ops := conns[worker]
		for t.m.more() && mctx.Err() == nil {
			ok, err := ops.TryLock(mctx, name)
			switch {
			case err != nil && mctx.Err() != nil:
				return
			case err != nil:
				t.fail(fmt.Errorf("raw try-lock: %w", err))
				return
			case !ok:
				t.refusals.Add(1)
				continue
			}
			ok, err = ops.Unlock(context.WithoutCancel(mctx), name)
			if err != nil || !ok {
				t.fail(fmt.Errorf("raw unlock: released %v: %v", ok, err))
				return
			}
			t.success()
		}
	})
}

// RawWaitingContention measures workers driver connections each waiting
// on the server for name (SessionOps.Lock, up to handOverWait) and
// freeing it at once: the raw blocking loop (GET_LOCK(name, 10), a
// pg_advisory_lock under lock_timeout) that waiting engine workers
// compete with. The waits still running when the budget is spent are cut
// off and not counted; one that runs out is a refusal.
func RawWaitingContention(ctx context.Context, open func(ctx context.Context) (SessionOps, error), name string, workers int, b Budget) (Contended, error) {
	conns, closeAll, err := openRaw(ctx, open, workers)
	defer closeAll()
	if err != nil {
		return Contended{}, err
	}
	for _, ops := range conns {
		if ops.Lock == nil {
			return Contended{}, fmt.Errorf("%w: no raw server-side wait", dialects.ErrUnsupported)
		}
	}
	return contend(ctx, workers, b, true, func(mctx context.Context, worker int, t *tally) {
		ops := conns[worker]
		for t.m.more() && mctx.Err() == nil {
			ok, err := ops.Lock(mctx, name, handOverWait)
			switch {
			case err != nil && mctx.Err() != nil:
				return
			case err != nil:
				t.fail(fmt.Errorf("raw lock: %w", err))
				return
			case !ok:
				t.refusals.Add(1)
				continue
			}
			ok, err = ops.Unlock(context.WithoutCancel(mctx), name)
			if err != nil || !ok {
				t.fail(fmt.Errorf("raw unlock: released %v: %v", ok, err))
				return
			}
			t.success()
		}
	})
}

// openRaw opens n raw connections; closeAll closes those it opened (a
// waiting statement cut off on one ends with its connection).
func openRaw(ctx context.Context, open func(ctx context.Context) (SessionOps, error), n int) ([]SessionOps, func(), error) {
	conns := make([]SessionOps, 0, n)
	closeAll := func() {
		for _, c := range conns {
			closeSession(c)
		}
	}
	for range n {
		ops, err := open(ctx)
		if err != nil {
			return conns, closeAll, err
		}
		conns = append(conns, ops)
	}
	return conns, closeAll, nil
}

// workerOptions gives each worker an owner of its own, as separate
// processes would have.
func workerOptions(opts dialects.Options, worker int) dialects.Options {
	opts.Owner = fmt.Sprintf("%s-w%d", opts.Owner, worker)
	return opts
}
