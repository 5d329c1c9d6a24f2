package dialects

import (
	"context"
	"time"
)

// Holding after release (Options.AtLeast on the session strategy).
//
// A session lock has no lease on the server to carry its at-least, so
// the process carries it: a Release before locked-at + AtLeast ends the
// lease at once (Done closes, Err stays nil, Release returns without a
// round trip) and leaves the lock held on its lock connection; a timer
// frees it there once AtLeast has passed since the grant, with the
// connection's usual unlock, and the connection holding nothing then goes
// back to idling. Meanwhile the lock is still this process's: another
// Acquire of the name in the process is refused (or waits) as while it
// was held, and another process finds it taken on the server.
//
// The hold lasts only as long as the process and the connection do. The
// server frees a session's locks with the session, so a lost lock
// connection, SessionLocker.Close and the process's exit all free a held
// lock at once, before its at-least; a process that must keep it until
// then (one about to exit) waits on Freed first.

// Lingering is implemented by leases that a Release may leave held by
// this process for a while (a session lock released before its AtLeast
// has passed).
type Lingering interface {
	// Freed is closed once this process no longer holds the lease's lock:
	// released and unlocked on the server, or its connection gone.
	Freed() <-chan struct{}
}

// LeaseUnwrapper is implemented by leases that wrap another (a namespaced
// lease, a tracked one), so that Freed reaches the backend's lease.
type LeaseUnwrapper interface {
	Unwrap() Lease
}

// closedChan is the channel Freed returns for leases that hold nothing in
// the process after Release.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// Freed returns a channel that is closed once lease's lock, released, is
// no longer held by this process. For a lease that keeps nothing in the
// process after Release (the table strategy and the lease stores keep
// at-least on the server) it is closed already. On a sys_sched_lock table,
// whose release deletes the row (Schema.ReleaseDeletesRow), an early
// release keeps the row until at-least has passed and the process deletes
// it then: Freed closes after that. A process about to exit
// after a Release waits on it, so that a session lock's at-least is kept.
func Freed(lease Lease) <-chan struct{} {
	for lease != nil {
		if l, ok := lease.(Lingering); ok {
			return l.Freed()
		}
		u, ok := lease.(LeaseUnwrapper)
		if !ok {
			break
		}
		lease = u.Unwrap()
	}
	return closedChan
}

// Freed implements Lingering: closed once the lock's key is free in this
// process, which is when the server no longer holds it for this process
// (released, or its connection gone).
func (s *sessionLease) Freed() <-chan struct{} { return s.entry.freed }

// holdLeft is how much longer the lease must hold its lock to have held
// it AtLeast since it was granted; 0 or less when it has.
func (s *sessionLease) holdLeft() time.Duration {
	if s.atLeast <= 0 {
		return 0
	}
	return s.atLeast - time.Since(s.granted)
}

// hold keeps s's lock on its connection for d and then frees it. It
// reports false, scheduling nothing, when s's connection was lost already
// (the lease then ended as lost) or the locker is closed.
func (l *SessionLocker) hold(s *sessionLease, d time.Duration) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, live := s.conn.leases[s]; !live || l.closed {
		return false
	}
	if l.holds == nil {
		l.holds = map[*sessionLease]*time.Timer{}
	}
	l.holding.Add(1)
	l.holds[s] = time.AfterFunc(d, func() { l.endHold(s) })
	return true
}

// endHold frees a held lock once its at-least has passed, on the
// connection that holds it. An unlock that fails twice costs the
// connection, which frees the lock all the same.
func (l *SessionLocker) endHold(s *sessionLease) {
	if !l.takeHold(s) {
		return // the connection was lost or the locker closed meanwhile
	}
	defer l.holding.Done()
	c := s.conn
	c.pending.Add(1)
	_, _ = c.batched(context.Background(), batchUnlock, s.name)
	l.released(s)
}

// takeHold removes s from the holds; only the caller that removed it goes
// on (and owes holding.Done).
func (l *SessionLocker) takeHold(s *sessionLease) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.holds[s]; !ok {
		return false
	}
	delete(l.holds, s)
	return true
}

// dropHoldLocked forgets the hold of s, whose lock went with its
// connection. l.mu is held.
func (l *SessionLocker) dropHoldLocked(s *sessionLease) {
	if t, ok := l.holds[s]; ok {
		t.Stop()
		delete(l.holds, s)
		l.holding.Done()
	}
}

// Holding is the number of released session locks this locker still
// holds for their at-least.
func (l *SessionLocker) Holding() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.holds)
}
