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

// Bounds of the safety margin by which WithLock stops fn before a lease
// ends; see WithLock.
const (
	minSafetyMargin = time.Second
	maxSafetyMargin = 30 * time.Second
)

// SafetyMargin is how long before a lease's Until WithLock cancels fn's
// context when the lease could not be refreshed: AtMost/10, at least 1s
// and at most 30s, and never more than AtMost/3 (the refresh interval), so
// that a short lease still gets its refreshes. A 30-minute lease stops fn
// 30s early, a 9s lease 1s early, a 600ms lease 200ms early.
func SafetyMargin(atMost time.Duration) time.Duration {
	m := min(max(atMost/10, minSafetyMargin), maxSafetyMargin)
	return min(m, atMost/3)
}

// RefreshInterval is how often WithLock refreshes a lease of atMost: a
// third of it.
func RefreshInterval(atMost time.Duration) time.Duration { return atMost / 3 }

// WithLock acquires name with locker, runs fn while the lock is held, keeps
// the lease alive, and releases the lock when fn returns.
//
//   - Acquire honours opts (Wait, AtMost, AtLeast, Owner); when the lock is
//     taken WithLock returns the Acquire error (matching ErrHeld) and fn
//     does not run.
//   - While fn runs, the lease is refreshed every AtMost/3 (session leases
//     also watch their connection on their own). An owner WithLock
//     generates (opts.Owner empty) declares that heartbeat (WithHeartbeat),
//     so listings tell a holder that stopped refreshing (StateStale).
//   - fn's context is cancelled as soon as the lease is lost, and also
//     SafetyMargin(AtMost) before the lease's Until when the refreshes keep
//     failing: fn then has that margin to stop before another node can take
//     the lock. In both cases the cause (context.Cause) matches
//     ErrLeaseLost. Leases without an Until (session locks) have no margin.
//   - After fn returns the lock is released (keeping it until locked-at +
//     AtLeast, a session lock in the background: WithLock does not wait
//     for it), with a fresh ReleaseTimeout context if ctx is done. When fn
//     released the lease itself, cleanly, nothing more is sent.
//
// The result is fn's error joined with the lease's error when the lease was
// lost, fn was stopped before the lease's end, or the release failed, so
// errors.Is finds either. A clean release by fn itself is no error.
func WithLock(ctx context.Context, locker Locker, name string, opts Options, fn func(ctx context.Context, lease Lease) error) error {
	generated := opts.Owner == ""
	opts, err := opts.Normalize()
	if err != nil {
		return err
	}
	if generated {
		opts.Owner = WithHeartbeat(opts.Owner, Heartbeat{Every: RefreshInterval(opts.AtMost), Lease: opts.AtMost, AtLeast: opts.AtLeast})
	}
	lease, err := locker.Acquire(ctx, name, opts)
	if err != nil {
		return err
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	stopKeep := make(chan struct{})
	keepDone := make(chan struct{})
	var stopped error // why keepAlive cancelled fn; read after keepDone
	go func() {
		defer close(keepDone)
		stopped = keepAlive(runCtx, lease, RefreshInterval(opts.AtMost), SafetyMargin(opts.AtMost), stopKeep)
		if stopped != nil {
			cancel(stopped)
		}
	}()

	fnErr := fn(runCtx, lease)
	close(stopKeep)
	<-keepDone

	if isDone(lease.Done()) {
		// Lost, or released by fn: nothing is left to release.
		return errors.Join(fnErr, firstErr(lease.Err(), stopped))
	}
	relCtx := ctx
	if ctx.Err() != nil {
		relCtx = context.WithoutCancel(ctx)
	}
	relCtx, relCancel := context.WithTimeout(relCtx, ReleaseTimeout)
	defer relCancel()
	relErr := lease.Release(relCtx)
	if relErr != nil {
		if lost := lease.Err(); lost != nil {
			return errors.Join(fnErr, lost)
		}
		return errors.Join(fnErr, stopped, relErr)
	}
	return errors.Join(fnErr, stopped)
}

// keepAlive refreshes lease every interval until stop is closed, ctx ends
// or the lease ends. It returns why fn must stop: the lease's error when it
// was lost, an error matching ErrLeaseLost when margin before the lease's
// Until has come without a successful refresh, or nil (stopped, cancelled,
// or released cleanly by fn).
//
// A refresh runs beside the loop, so that one hanging on an unreachable
// database holds up neither the early stop nor the loss nor the release: it
// is abandoned (its context cancelled) as soon as keepAlive returns.
func keepAlive(ctx context.Context, lease Lease, every, margin time.Duration, stop <-chan struct{}) error {
	if every <= 0 {
		every = time.Second
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	var refreshed <-chan error // the refresh in flight; nil when none
	var refreshErr error       // the last refresh's error; nil after a success
	abandon := func() {}
	defer func() { abandon() }()
	for {
		stopAt, deadline := stopDeadline(lease, margin)
		select {
		case <-stop:
			deadline.Stop()
			return nil
		case <-ctx.Done():
			deadline.Stop()
			return nil
		case <-lease.Done():
			deadline.Stop()
			return lease.Err() // nil after a clean Release by fn
		case <-deadline.C:
			return marginErr(lease, stopAt, margin, refreshErr)
		case <-tick.C:
			deadline.Stop()
			if refreshed == nil {
				abandon()
				refreshed, abandon = startRefresh(ctx, lease, every, stopAt)
			}
		case err := <-refreshed:
			deadline.Stop()
			refreshed = nil
			refreshErr = err
			if err != nil && (errors.Is(err, ErrLeaseLost) || errors.Is(err, ErrNotOwner)) {
				return leaseLoss(lease, err)
			}
			// Another error (a timeout, a transient network failure) is
			// retried at the next tick; the deadline still stops fn in time.
		}
	}
}

// startRefresh sends one Refresh, giving up after timeout or at stopAt
// (unless zero); its result arrives on the channel. The returned func
// abandons it.
func startRefresh(ctx context.Context, lease Lease, timeout time.Duration, stopAt time.Time) (<-chan error, context.CancelFunc) {
	deadline := time.Now().Add(timeout)
	if !stopAt.IsZero() && stopAt.Before(deadline) {
		deadline = stopAt
	}
	rctx, cancel := context.WithDeadline(ctx, deadline)
	result := make(chan error, 1)
	go func() { result <- lease.Refresh(rctx) }()
	return result, cancel
}

// stopDeadline returns the instant margin before lease's Until and a timer
// that fires then; for a lease without Until the timer never fires.
func stopDeadline(lease Lease, margin time.Duration) (time.Time, *time.Timer) {
	until := lease.Until()
	if until.IsZero() {
		t := time.NewTimer(time.Hour)
		t.Stop()
		return time.Time{}, t
	}
	at := until.Add(-margin)
	return at, time.NewTimer(time.Until(at))
}

// marginErr says why fn was stopped before the lease's end, quoting the
// last refresh's error (the database's own reason) when there was one.
func marginErr(lease Lease, stopAt time.Time, margin time.Duration, refreshErr error) error {
	if e := lease.Err(); e != nil {
		return e
	}
	why := ""
	if refreshErr != nil {
		why = fmt.Sprintf(" (%v)", refreshErr)
	}
	return fmt.Errorf("%w: lease of %q ends at %s and could not be refreshed%s; stopped %s before its end",
		ErrLeaseLost, lease.Name(), FormatTime(stopAt.Add(margin)), why, margin)
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

func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
