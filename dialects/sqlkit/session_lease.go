package sqlkit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// sessionLease is one lock held on a lock connection of a SessionLocker.
// Its state has its own mutex, never held during a statement, so Err and
// Done answer at once whatever the connection is doing.
type sessionLease struct {
	locker *SessionLocker
	conn   *lockConn
	key    string
	name   string
	owner  string
	entry  *heldEntry
	// granted is when the server's grant came back (host monotonic
	// clock) and atLeast the acquire's Options.AtLeast: a Release before
	// granted + atLeast leaves the lock held until then (db_session_hold.go).
	granted time.Time
	atLeast time.Duration

	mu        sync.Mutex
	finished  bool
	releasing chan struct{} // closed when a Release in flight has ended
	err       error
	done      chan struct{}
}

var _ dialects.Lease = (*sessionLease)(nil)

func (s *sessionLease) Name() string          { return s.name }
func (s *sessionLease) Owner() string         { return s.owner }
func (s *sessionLease) Token() (int64, bool)  { return 0, false }
func (s *sessionLease) Until() time.Time      { return time.Time{} }
func (s *sessionLease) Done() <-chan struct{} { return s.done }

// Err never waits for a statement.
func (s *sessionLease) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// end finishes the lease with err (nil: released); only the first call
// counts.
func (s *sessionLease) end(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return
	}
	s.finished = true
	s.err = err
	close(s.done)
}

func (s *sessionLease) ended() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.finished, s.err
}

// afterEnd is the error of an operation on an ended lease.
func (s *sessionLease) afterEnd(op string) error {
	if _, err := s.ended(); err != nil {
		return err
	}
	return dialects.Wrap(s.locker.Dialect, op, fmt.Errorf("%w: already released", dialects.ErrLeaseLost))
}

// lost ends this lease alone as lost (its connection stays: the other
// locks on it are unaffected) and frees its key in the process.
func (s *sessionLease) lost(why string) error {
	err := dialects.Wrap(s.locker.Dialect, "lease", fmt.Errorf("%w: %s", dialects.ErrLeaseLost, why))
	s.locker.released(s)
	s.end(err)
	return s.Err()
}

// Refresh proves the lock is still held by its connection's session: one
// statement on that connection.
func (s *sessionLease) Refresh(ctx context.Context) error {
	if done, _ := s.ended(); done {
		return s.afterEnd("refresh")
	}
	var held bool
	s.conn.pending.Add(1)
	err := s.conn.do(ctx, 0, func(ctx context.Context) error {
		h, err := s.conn.stmts.Holds(ctx, s.name)
		held = h
		if err == nil && !h {
			// The session should hold the lock and says it does not:
			// whatever it might still hold of it is given back, so that
			// a lost lease never leaves the lock behind.
			_, _ = s.conn.stmts.Unlock(ctx, s.name)
		}
		return err
	})
	if done, _ := s.ended(); done {
		return s.afterEnd("refresh")
	}
	switch {
	case err != nil:
		return dialects.Wrap(s.locker.Dialect, "refresh", err)
	case !held:
		return s.lost("the session no longer holds the lock")
	}
	return nil
}

// Release frees the lock on its own connection; the other locks of that
// connection stay held. The statement runs on the caller's goroutine once
// the connection is free; when ctx ends before that, Release returns ctx's
// error, the release still happens, and Done closes once it has.
//
// Before AtLeast has passed since the grant, Release sends nothing: the
// lease ends at once (Done closes, Err stays nil) and the lock stays held
// on its connection until AtLeast has passed, when it is freed there in
// the background (see Lingering and Freed).
func (s *sessionLease) Release(ctx context.Context) error {
	s.mu.Lock()
	if s.finished {
		s.mu.Unlock()
		return s.afterEnd("release")
	}
	if s.releasing != nil {
		inFlight := s.releasing
		s.mu.Unlock()
		select {
		case <-inFlight:
			return s.afterEnd("release")
		case <-ctx.Done():
			return dialects.Wrap(s.locker.Dialect, "release", ctx.Err())
		}
	}
	s.releasing = make(chan struct{})
	s.mu.Unlock()

	if left := s.holdLeft(); left > 0 && s.locker.hold(s, left) {
		s.end(nil)
		close(s.releasing)
		// A connection lost between the hold and the end is a lost lock:
		// its loss is the lease's error.
		_, err := s.ended()
		return err
	}
	c := s.conn
	c.pending.Add(1)
	ok, err := c.batched(ctx, batchUnlock, s.name)
	if err != nil && err == ctx.Err() { //nolint:errorlint // batched returns ctx's own error, unwrapped, only when the unlock was never sent
		// ctx ended before the release could be sent: it still happens,
		// in the background, and Done closes once it has.
		c.pending.Add(1)
		go func() {
			ok, err := c.batched(context.Background(), batchUnlock, s.name)
			_ = s.unlocked(ok, err)
			close(s.releasing)
		}()
		return dialects.Wrap(s.locker.Dialect, "release", err)
	}
	err = s.unlocked(ok, err)
	close(s.releasing)
	if err != nil {
		var gone errConnGone
		if errors.As(err, &gone) {
			// The connection went away: so did the lock.
			if _, lostErr := s.ended(); lostErr != nil {
				return lostErr
			}
		}
		return s.lost(fmt.Sprintf("release failed: %v", err))
	}
	if _, e := s.ended(); e != nil {
		return e
	}
	return nil
}

// unlocked ends the lease after its unlock answered ok, err (the
// connection retried a failed unlock once, and dropped itself when that
// failed too).
func (s *sessionLease) unlocked(ok bool, err error) error {
	switch {
	case err != nil:
		return err
	case !ok:
		_ = s.lost("the session no longer held the lock at release")
		return nil
	}
	s.locker.released(s)
	s.end(nil)
	return nil
}
