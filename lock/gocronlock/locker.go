package gocronlock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-co-op/gocron/v2"

	"github.com/schedlock/schedlock/lock"
)

// Options tune the locks a Locker takes for gocron's runs.
type Options struct {
	// AtMost is the lease of one run (default lock.DefaultAtMost, 30m):
	// refreshed every third of it while the job runs; how long a node that
	// died mid-run keeps the lock.
	AtMost time.Duration
	// AtLeast keeps the lock after a run that ended sooner, until it has
	// been held this long (default 0), so that nodes whose clocks are
	// behind skip the tick; see the package doc. Must not exceed AtMost.
	AtLeast time.Duration
	// Owner is recorded as the holder of every lock (default a new
	// lock.NewOwner() per run: host:pid:random).
	Owner string
	// OnLost, when set, is called (from another goroutine) when a lease is
	// lost while its job runs: expired, taken over, or its connection
	// dropped. gocron gives the job no way to be stopped; OnLost is where
	// to tell it. err matches lock.ErrLeaseLost.
	OnLost func(key string, err error)
}

// Locker implements gocron.Locker on a lock.Locker. It is safe for
// concurrent use.
type Locker struct {
	locker lock.Locker
	opts   Options
}

var _ gocron.Locker = (*Locker)(nil)

// NewLocker returns a gocron.Locker that takes gocron's locks on locker
// with opts. Invalid options (negative durations, AtLeast over AtMost)
// make every Lock fail with an error matching lock.ErrInvalid.
func NewLocker(locker lock.Locker, opts Options) *Locker {
	return &Locker{locker: locker, opts: opts}
}

// Lock takes the lock called key (gocron passes the job's name) with one
// try. It fails with an error matching lock.ErrHeld when another node
// holds it, which gocron counts as a skipped run. The returned lock's lease
// is refreshed until its Unlock; ctx bounds the acquire only, so a
// scheduler shutting down does not let the lease of a run still going
// lapse.
func (l *Locker) Lock(ctx context.Context, key string) (gocron.Lock, error) {
	if ctx.Err() != nil {
		// Refused before any statement: the cancellation below reaches
		// the acquire from another goroutine, so a statement could commit
		// and still report ctx's error.
		return nil, fmt.Errorf("gocronlock: lock %q: %w", key, context.Cause(ctx))
	}
	opts := lock.Options{AtMost: l.opts.AtMost, AtLeast: l.opts.AtLeast, Owner: l.opts.Owner}
	run := &run{key: key, onLost: l.opts.OnLost,
		unlock: make(chan struct{}), acquired: make(chan struct{}), result: make(chan error, 1)}

	// The held lock outlives ctx: once acquired, only Unlock ends it.
	held, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	go func() {
		defer cancel()
		defer stop() // a refused try must not stay registered on ctx
		run.result <- lock.WithLock(held, l.locker, key, opts, func(leaseCtx context.Context, _ lock.Lease) error {
			if !stop() { // ctx ended while the lock was being taken
				return fmt.Errorf("gocronlock: lock %q: %w", key, context.Cause(ctx))
			}
			close(run.acquired)
			return run.hold(leaseCtx)
		})
	}()
	select {
	case <-run.acquired:
		return run, nil
	case err := <-run.result:
		return nil, err
	}
}

// run is one held lock; it implements gocron.Lock.
type run struct {
	key    string
	onLost func(string, error)

	unlockOnce sync.Once
	unlock     chan struct{} // closed by the first Unlock
	acquired   chan struct{} // closed once the lock is held
	result     chan error    // what WithLock returned
}

// hold keeps the lock until Unlock, reporting a loss meanwhile.
func (r *run) hold(leaseCtx context.Context) error {
	select {
	case <-r.unlock:
	case <-leaseCtx.Done():
		if cause := context.Cause(leaseCtx); r.onLost != nil && errors.Is(cause, lock.ErrLeaseLost) {
			r.onLost(r.key, cause)
		}
		<-r.unlock
	}
	return nil
}

// Unlock releases the lock, keeping it until it has been held AtLeast
// (see lock.Lease.Release: a session lock is then kept by this process
// and freed in the background, without a round trip now). It waits for
// the release (at most lock's release timeout, whatever ctx says, so that
// a scheduler shutting down still frees its locks) and returns its error,
// or the loss of the lease during the run (matching lock.ErrLeaseLost).
func (r *run) Unlock(_ context.Context) error {
	first := false
	r.unlockOnce.Do(func() { first = true })
	if !first {
		return fmt.Errorf("gocronlock: lock %q: %w: unlocked twice", r.key, lock.ErrLeaseLost)
	}
	close(r.unlock)
	return <-r.result
}
