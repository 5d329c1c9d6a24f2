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
	deadline := time.Now().Add(opts.Wait)
	for {
		lease, err := try()
		if err == nil || !time.Now().Before(deadline) || !tryAgain(err, unavailable) {
			return lease, err
		}
		t := time.NewTimer(min(opts.RetryEvery, time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("gave up waiting: %w (last try: %v)", ctx.Err(), err)
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
