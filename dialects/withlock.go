package dialects

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ReleaseTimeout bounds the Release that WithLock sends after fn returns,
// even when the caller's context is already cancelled.
const ReleaseTimeout = 10 * time.Second

// WithLock acquires name with locker, runs fn while the lock is held, keeps
// the lease alive, and releases the lock when fn returns.
//
//   - Acquire honours opts (Wait, AtMost, AtLeast, Owner); when the lock is
//     taken WithLock returns the Acquire error (matching ErrHeld) and fn
//     does not run.
//   - While fn runs, the lease is refreshed every AtMost/3 (session leases
//     also watch their connection on their own).
//   - fn's context is cancelled as soon as the lease is lost; its cause
//     (context.Cause) matches ErrLeaseLost. fn should then stop promptly:
//     another holder may already run.
//   - After fn returns the lock is released (keeping it until locked-at +
//     AtLeast), with a fresh ReleaseTimeout context if ctx is done.
//
// The result is fn's error joined with the lease's error when the lease was
// lost or the release failed, so errors.Is finds either.
func WithLock(ctx context.Context, locker Locker, name string, opts Options, fn func(ctx context.Context, lease Lease) error) error {
	opts, err := opts.Normalize()
	if err != nil {
		return err
	}
	lease, err := locker.Acquire(ctx, name, opts)
	if err != nil {
		return err
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	stopKeep := make(chan struct{})
	keepDone := make(chan struct{})
	go func() {
		defer close(keepDone)
		keepAlive(runCtx, lease, opts.AtMost/3, stopKeep, cancel)
	}()

	fnErr := fn(runCtx, lease)
	close(stopKeep)
	<-keepDone

	relCtx := ctx
	if ctx.Err() != nil {
		relCtx = context.WithoutCancel(ctx)
	}
	relCtx, relCancel := context.WithTimeout(relCtx, ReleaseTimeout)
	defer relCancel()
	relErr := lease.Release(relCtx)
	if relErr != nil {
		if lost := lease.Err(); lost != nil {
			relErr = lost
		}
		return errors.Join(fnErr, relErr)
	}
	return fnErr
}

// keepAlive refreshes lease every interval and cancels the run with the
// lease's error as soon as it is lost.
func keepAlive(ctx context.Context, lease Lease, every time.Duration, stop <-chan struct{}, cancel context.CancelCauseFunc) {
	if every <= 0 {
		every = time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-lease.Done():
			cancel(leaseLoss(lease, nil))
			return
		case <-t.C:
			err := refreshOnce(ctx, lease, every, stop)
			if err != nil && (errors.Is(err, ErrLeaseLost) || errors.Is(err, ErrNotOwner)) {
				cancel(leaseLoss(lease, err))
				return
			}
			// Another error (a timeout, a transient network failure) is
			// retried at the next tick; the lease's own deadline still
			// ends it in time.
		}
	}
}

// refreshOnce refreshes lease, giving up after timeout, or as soon as fn
// has returned (stop) or the lease has ended: a refresh hanging on an
// unreachable database must hold up neither the release nor the loss.
func refreshOnce(ctx context.Context, lease Lease, timeout time.Duration, stop <-chan struct{}) error {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		select {
		case <-stop:
		case <-lease.Done():
		case <-finished:
			return
		}
		cancel()
	}()
	return lease.Refresh(rctx)
}

func leaseLoss(lease Lease, err error) error {
	if e := lease.Err(); e != nil {
		return e
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("%w: lease of %q ended", ErrLeaseLost, lease.Name())
}
