package dialects

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// RetryAcquire is the waiting loop of an Acquire that polls: it calls
// try, and again every opts.RetryEvery (the last pause cut short at the
// deadline) until opts.Wait has passed since the call, while the lock is
// held (ErrHeld — but not ErrPaused: a pause is not waited out) or
// unavailable(err) reports the store unavailable for now (a cut
// connection, a failover under way; nil: nothing else is tried again).
// It returns try's last result; when ctx ends during a pause between
// tries, an error matching ctx's that quotes the last try. opts must be
// normalised (Options.Normalize).
func RetryAcquire(ctx context.Context, opts Options, try func() (Lease, error), unavailable func(error) bool) (Lease, error) {
	return RetryAcquireWoken(ctx, opts, try, unavailable, nil)
}

// Wakeup is a store's report that the lock a waiting acquire waits for
// may have come free: Woken receives after a release, a delete or an
// expiry of the lock (a report that came while a try ran is kept, so
// none is lost between tries); Stop ends the watch and must be called
// once.
type Wakeup struct {
	Woken <-chan struct{}
	Stop  func()
}

// RetryAcquireWoken is RetryAcquire for a store that can tell a waiter
// when the lock is released (a Redis channel, an etcd watch): after the
// first refusal (ErrHeld) it calls watch and, once watching, tries again
// at once, so that a release between the refusal and the watch is not
// missed; then each pause ends at the first of a wake-up, the refused
// lease's end (HeldError.Until, when ahead), opts.RetryEvery (the poll
// that remains the fallback: a wake-up lost with a cut connection, a
// release the store does not report) and the deadline. A watch that
// fails leaves the poll alone; watch nil is RetryAcquire.
func RetryAcquireWoken(ctx context.Context, opts Options, try func() (Lease, error), unavailable func(error) bool, watch func(ctx context.Context) (Wakeup, error)) (Lease, error) {
	deadline := time.Now().Add(opts.Wait)
	var woken <-chan struct{}
	for {
		lease, err := try()
		if err == nil || !time.Now().Before(deadline) || !tryAgain(err, unavailable) {
			return lease, err
		}
		var held *HeldError
		isHeld := errors.As(err, &held)
		if watch != nil && woken == nil && isHeld {
			w, werr := watch(ctx)
			if werr == nil {
				defer w.Stop()
				woken = w.Woken
				continue // watching now: a release before it is not missed
			}
			watch = nil // the poll alone
		}
		pause := min(opts.RetryEvery, time.Until(deadline))
		if isHeld && watch != nil {
			if d := time.Until(held.Until); d > 0 && d < pause {
				pause = d
			}
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("gave up waiting: %w (last try: %v)", ctx.Err(), err)
		case <-woken:
			t.Stop()
		case <-t.C:
		}
	}
}

// tryAgain reports whether a waiting acquire tries again after err.
func tryAgain(err error, unavailable func(error) bool) bool {
	if errors.Is(err, ErrHeld) {
		return !errors.Is(err, ErrPaused)
	}
	return unavailable != nil && unavailable(err)
}
