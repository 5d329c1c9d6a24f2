package sqlkit

import (
	"context"
	"time"
)

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
