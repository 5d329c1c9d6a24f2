package dialects

import (
	"fmt"
	"sync"
	"time"
)

// LeaseEnd is what a backend's Lease keeps about its own end: Until, the
// error it ended with, the last failed refresh, and Done.
//
// A lease is lost at Until unless a refresh extends it first (a zero
// Until, a Handle's before its first refresh, never comes), and whoever
// looks first ends it: the timer behind Done, Err, Ended, Extend
// or End. The timer is set only once Done has been called, so a lease
// acquired and released without anyone watching Done costs no timer (a
// timer per lock cycle wakes the runtime's network poller, which on a
// small machine is measurable beside a round trip). The clock is the
// host's monotonic one; the backend chooses Until so that it is never
// after the lock's end on the server.
//
// Embed it by value in a lease and call Start once before sharing the
// lease. It is safe for concurrent use and never waits on I/O, so Until,
// Err and Done answer while a refresh is in flight.
type LeaseEnd struct {
	mu         sync.Mutex
	until      time.Time
	expired    func(until time.Time, lastRefresh error) error
	timer      *time.Timer
	gen        uint64 // bumped on every re-arm; a stale timer sees another value
	finished   bool
	err        error
	refreshErr error
	done       chan struct{}
	onEnd      func() // OnEnd's hook
	ending     func() // onEnd, due once the lock is let go
}

// Start sets the first Until and how an expiry is told: expired builds
// the error the lease ends with at until (lastRefresh is the last
// refresh's failure, nil if none failed since the last success).
func (e *LeaseEnd) Start(until time.Time, expired func(until time.Time, lastRefresh error) error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.until, e.expired = until, expired
}

// OnEnd sets f to run once when the lease ends, however it ends (an
// expiry, a loss, a release), after Done is closed and outside the
// LeaseEnd's lock, so f may take a backend's lock to forget the lease.
// Set it with Start, before sharing the lease. An expiry is noticed by
// the timer behind Done, or by the next call that looks: a backend that
// must forget every lease at its Until calls Done at the acquire.
func (e *LeaseEnd) OnEnd(f func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.onEnd = f
}

// ExpiredLease is the expiry error of Start for the lease of lock name in
// dialect's backend: an ErrLeaseLost saying when it expired and, if one
// failed, the last refresh's error.
func ExpiredLease(dialect, name string) func(until time.Time, lastRefresh error) error {
	return func(until time.Time, lastRefresh error) error {
		why := "without a refresh"
		if lastRefresh != nil {
			why = fmt.Sprintf("without a refresh; the last refresh failed: %v", lastRefresh)
		}
		return Wrap(dialect, "lease", fmt.Errorf("%w: lease of lock %q expired at %s %s", ErrLeaseLost, name, FormatTime(until), why))
	}
}

// Until is when the lease ends unless extended.
func (e *LeaseEnd) Until() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.until
}

// Err is nil while the lease runs and after a release; the reason it was
// lost otherwise (an expiry due by now included).
func (e *LeaseEnd) Err() error {
	e.mu.Lock()
	defer e.unlock()
	e.expireIfDueLocked()
	return e.err
}

// Done is closed when the lease ends: at Until unless extended, on a
// loss, or on a release.
func (e *LeaseEnd) Done() <-chan struct{} {
	e.mu.Lock()
	defer e.unlock()
	if e.done == nil {
		e.expireIfDueLocked()
		e.done = make(chan struct{})
		if e.finished {
			close(e.done)
		} else {
			e.armLocked()
		}
	}
	return e.done
}

// LastRefreshError implements RefreshFailure.
func (e *LeaseEnd) LastRefreshError() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.refreshErr
}

// RefreshFailed records err as the last refresh's failure (an expiry
// quotes it) and returns it; the lease runs on until Until.
func (e *LeaseEnd) RefreshFailed(err error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.refreshErr = err
	return err
}

// Extend moves Until after a successful refresh and forgets the last
// failure. If the lease ended first — lost, released, or due before the
// refresh's answer came — it changes nothing and returns the lease's
// error.
func (e *LeaseEnd) Extend(until time.Time) error {
	e.mu.Lock()
	defer e.unlock()
	if e.expireIfDueLocked(); e.finished {
		return e.endedErrLocked()
	}
	e.until, e.refreshErr = until, nil
	if e.done != nil {
		e.armLocked()
	}
	return nil
}

// Ended reports whether the lease has ended (an expiry due by now
// included) and its error: nil after a release.
func (e *LeaseEnd) Ended() (bool, error) {
	e.mu.Lock()
	defer e.unlock()
	e.expireIfDueLocked()
	return e.finished, e.err
}

// End ends the lease with err (nil: released) unless it has ended
// already, an expiry due by now included, and returns the lease's error:
// err, or the earlier end's.
func (e *LeaseEnd) End(err error) error {
	e.mu.Lock()
	defer e.unlock()
	if e.expireIfDueLocked(); !e.finished {
		e.endLocked(err)
	}
	return e.err
}

// endedErrLocked is the error Extend returns on an ended lease: its
// loss, or for a released one ErrLeaseLost (backends check Ended before a
// refresh and say that in their own words).
func (e *LeaseEnd) endedErrLocked() error {
	if e.err != nil {
		return e.err
	}
	return fmt.Errorf("%w: the lease was already released", ErrLeaseLost)
}

// expireIfDueLocked ends the lease as expired when Until has passed.
func (e *LeaseEnd) expireIfDueLocked() {
	if !e.finished && !e.until.IsZero() && !time.Now().Before(e.until) {
		e.endLocked(e.expired(e.until, e.refreshErr))
	}
}

// armLocked sets the timer that ends the lease at Until (none for a zero
// Until).
func (e *LeaseEnd) armLocked() {
	e.gen++
	if e.timer != nil {
		e.timer.Stop()
	}
	if e.until.IsZero() {
		return
	}
	gen := e.gen
	e.timer = time.AfterFunc(time.Until(e.until), func() { e.fire(gen) })
}

// fire ends the lease when its timer fires, unless a refresh re-armed it.
func (e *LeaseEnd) fire(gen uint64) {
	e.mu.Lock()
	defer e.unlock()
	if !e.finished && gen == e.gen {
		e.endLocked(e.expired(e.until, e.refreshErr))
	}
}

// unlock lets the lock go, then runs the OnEnd hook if the lease ended
// under it.
func (e *LeaseEnd) unlock() {
	f := e.ending
	e.ending = nil
	e.mu.Unlock()
	if f != nil {
		f()
	}
}

// endLocked finishes the lease with err; the OnEnd hook is left for
// unlock.
func (e *LeaseEnd) endLocked(err error) {
	e.finished = true
	e.ending = e.onEnd
	e.err = err
	if e.timer != nil {
		e.timer.Stop()
	}
	if e.done != nil {
		close(e.done)
	}
}
