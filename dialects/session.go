package dialects

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"
	"time"
)

// SessionOps is what a database provides for connection-bound named locks.
// Each method runs exactly one statement on conn.
type SessionOps interface {
	// TryLock tries once, without waiting, to take name in conn's session.
	TryLock(ctx context.Context, conn *sql.Conn, name string) (bool, error)
	// Unlock releases name in conn's session; false when that session did
	// not hold it (another session's lock is never freed).
	Unlock(ctx context.Context, conn *sql.Conn, name string) (bool, error)
	// Holds reports whether conn's session holds name.
	Holds(ctx context.Context, conn *sql.Conn, name string) (bool, error)
}

// HolderFinder is optionally implemented by SessionOps that can name the
// session holding a lock (for messages such as "held by session 42").
type HolderFinder interface {
	Holder(ctx context.Context, db *sql.DB, name string) (string, error)
}

// DefaultCheckEvery is how often a session lease checks its connection.
const DefaultCheckEvery = time.Second

// SessionLocker is the Locker for the session strategy, shared by every
// dialect: each lock gets its own *sql.Conn, taken from the pool, pinned for
// the life of the lock, released on that same connection. A connection whose
// state is in doubt (an error, a cancelled statement, a failed release) is
// discarded, never returned to the pool, so no lock can leak into it.
type SessionLocker struct {
	Dialect string
	DB      *sql.DB
	Ops     SessionOps
	// CheckEvery is how often a held lease proves its connection is alive
	// and still holds the lock (default DefaultCheckEvery).
	CheckEvery time.Duration
}

var _ Locker = (*SessionLocker)(nil)

// Strategy reports StrategySession.
func (l *SessionLocker) Strategy() Strategy { return StrategySession }

// Acquire implements Locker.
func (l *SessionLocker) Acquire(ctx context.Context, name string, opts Options) (Lease, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	opts, err := opts.Normalize()
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(opts.Wait)
	for {
		lease, err := l.try(ctx, name, opts)
		if err == nil || !errors.Is(err, ErrHeld) || !time.Now().Add(opts.RetryEvery).Before(deadline) {
			return lease, err
		}
		select {
		case <-ctx.Done():
			return nil, Wrap(l.Dialect, "acquire", ctx.Err())
		case <-time.After(opts.RetryEvery):
		}
	}
}

func (l *SessionLocker) try(ctx context.Context, name string, opts Options) (Lease, error) {
	conn, err := l.DB.Conn(ctx)
	if err != nil {
		return nil, Wrap(l.Dialect, "acquire", fmt.Errorf("get connection: %w", Classify(l.Ops, err)))
	}
	ok, err := l.Ops.TryLock(ctx, conn, name)
	if err != nil {
		discard(conn)
		return nil, Wrap(l.Dialect, "acquire", err)
	}
	if !ok {
		_ = conn.Close()
		held := &HeldError{Name: name}
		if hf, isFinder := l.Ops.(HolderFinder); isFinder {
			held.Holder, _ = hf.Holder(ctx, l.DB, name)
		}
		return nil, Wrap(l.Dialect, "acquire", held)
	}
	every := l.CheckEvery
	if every <= 0 {
		every = DefaultCheckEvery
	}
	s := &sessionLease{locker: l, conn: conn, name: name, owner: opts.Owner, done: make(chan struct{}), stop: make(chan struct{})}
	go s.watch(every)
	return s, nil
}

// discard closes conn's physical connection instead of returning it to the
// pool: whatever lock it might hold goes with it.
func discard(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = conn.Close()
}

type sessionLease struct {
	locker *SessionLocker
	name   string
	owner  string

	mu       sync.Mutex // serialises use of conn
	conn     *sql.Conn
	finished bool
	err      error
	done     chan struct{}
	stop     chan struct{}
}

func (s *sessionLease) Name() string          { return s.name }
func (s *sessionLease) Owner() string         { return s.owner }
func (s *sessionLease) Token() (int64, bool)  { return 0, false }
func (s *sessionLease) Until() time.Time      { return time.Time{} }
func (s *sessionLease) Done() <-chan struct{} { return s.done }

func (s *sessionLease) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// watch proves, every interval, that the connection is alive and holds the
// lock; the first failure ends the lease as lost.
func (s *sessionLease) watch(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.mu.Lock()
			if !s.finished {
				ctx, cancel := context.WithTimeout(context.Background(), every)
				_ = s.checkLocked(ctx)
				cancel()
			}
			done := s.finished
			s.mu.Unlock()
			if done {
				return
			}
		}
	}
}

// checkLocked runs Holds and ends the lease as lost on failure. s.mu is held.
func (s *sessionLease) checkLocked(ctx context.Context) error {
	held, err := s.locker.Ops.Holds(ctx, s.conn, s.name)
	switch {
	case err != nil && ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded):
		return Wrap(s.locker.Dialect, "refresh", err) // the caller gave up; nothing is known
	case err != nil:
		return s.loseLocked(fmt.Errorf("%w: connection failed: %v", ErrLeaseLost, err))
	case !held:
		return s.loseLocked(fmt.Errorf("%w: the session no longer holds the lock", ErrLeaseLost))
	}
	return nil
}

func (s *sessionLease) loseLocked(cause error) error {
	err := Wrap(s.locker.Dialect, "lease", cause)
	s.endLocked(err)
	discard(s.conn)
	return err
}

func (s *sessionLease) endLocked(err error) {
	s.finished = true
	s.err = err
	close(s.stop)
	close(s.done)
}

// Refresh proves the lock is still held on its connection.
func (s *sessionLease) Refresh(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return s.afterEndLocked("refresh")
	}
	return s.checkLocked(ctx)
}

// Release frees the lock on its own connection and returns that connection
// to the pool only when the server confirmed the release.
func (s *sessionLease) Release(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return s.afterEndLocked("release")
	}
	ok, err := s.locker.Ops.Unlock(ctx, s.conn, s.name)
	if err != nil {
		// The state of the session is unknown: drop it, which frees the lock.
		return s.loseLocked(fmt.Errorf("%w: release failed, connection dropped to free the lock: %v", ErrLeaseLost, err))
	}
	if !ok {
		return s.loseLocked(fmt.Errorf("%w: the session no longer held the lock at release", ErrLeaseLost))
	}
	s.endLocked(nil)
	_ = s.conn.Close()
	return nil
}

func (s *sessionLease) afterEndLocked(op string) error {
	if s.err != nil {
		return s.err
	}
	return Wrap(s.locker.Dialect, op, fmt.Errorf("%w: already released", ErrLeaseLost))
}

// SessionKiller is optionally implemented by SessionOps whose database can
// terminate another session (pg_terminate_backend, KILL, …), which is the
// only way to free a session lock that its holder does not release.
type SessionKiller interface {
	HolderFinder
	// Kill terminates the session whose id Holder returned.
	Kill(ctx context.Context, db *sql.DB, sessionID string) error
}
