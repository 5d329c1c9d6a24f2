package dameng

import (
	"context"
	"database/sql"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/dbmslock"
)

var (
	_ dialects.SessionPreparer = (*SessionOps)(nil)
	_ dialects.SessionWaiter   = (*SessionOps)(nil)
	_ dialects.SessionKeyer    = (*SessionOps)(nil)
)

// lockSQL waits on the server: REQUEST in mode 6 (exclusive) for up to
// the third bind's seconds, release_on_commit FALSE like tryLockSQL.
// Binds, positional: lock name, OUT return code, timeout.
const lockSQL = `DECLARE
  h VARCHAR(128);
BEGIN
  SYS.DBMS_LOCK.ALLOCATE_UNIQUE(?, h);
  ? := SYS.DBMS_LOCK.REQUEST(h, 6, ?, FALSE);
END;`

// LockKey is the DBMS_LOCK name (LockName): names with one DBMS_LOCK name
// are one lock, and REQUEST of a lock the session already owns answers 4,
// which must never give a second lease of the process the same lock.
func (o *SessionOps) LockKey(name string) string { return LockName(name) }

// Lock waits on the server for up to wait: DBMS_LOCK.REQUEST with a
// timeout of dbmslock.TimeoutSeconds(wait), whole seconds as Oracle's
// INTEGER timeout (that DM's package takes the same type is [U]), so the
// wait is rounded up: a lock that stays taken is given up less than a
// second after wait, never before (see TimeoutSeconds for why it is not
// sliced). The answer is mapped by WaitResult: 0 and 4 granted, 1 still
// taken (false), 2 (deadlock), 3 and 5 a *DBMSLockError.
//
// The SessionLocker runs the wait on a lock connection holding no other
// lock and no transaction (so a commit by ALLOCATE_UNIQUE is harmless),
// and closes that connection when ctx ends during the wait: whatever the
// driver does on cancel (how the dm driver interrupts a running call is
// [U]), a grant racing with the cancel is freed with the connection.
//
// On a connection the SessionLocker prepared (Prepare) the block runs as
// its prepared statement.
func (o *SessionOps) Lock(ctx context.Context, conn *sql.Conn, name string, wait time.Duration) (bool, error) {
	exec := func(args ...any) (sql.Result, error) { return conn.ExecContext(ctx, lockSQL, args...) }
	if st, ok := o.waits.Load(conn); ok {
		exec = func(args ...any) (sql.Result, error) { return st.(*sql.Stmt).ExecContext(ctx, args...) }
	}
	rc, err := runBlock("REQUEST", exec, name, dbmslock.TimeoutSeconds(wait))
	if err != nil {
		return false, err
	}
	return WaitResult(rc)
}

// Prepare prepares the session-lock blocks on conn (tryLockSQL, unlockSQL,
// holdsSQL, and lockSQL for Lock): each is parsed once per lock
// connection and every operation is one execution of it.
func (o *SessionOps) Prepare(ctx context.Context, conn *sql.Conn) (dialects.SessionStatements, error) {
	s := &preparedSession{ops: o, conn: conn}
	var err error
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{{&s.try, tryLockSQL}, {&s.unlock, unlockSQL}, {&s.holds, holdsSQL}, {&s.lock, lockSQL}} {
		if *p.stmt, err = conn.PrepareContext(ctx, p.sql); err != nil {
			_ = s.Close()
			return nil, err
		}
	}
	o.waits.Store(conn, s.lock)
	return s, nil
}

// preparedSession is SessionOps prepared on one lock connection.
type preparedSession struct {
	ops                      *SessionOps
	conn                     *sql.Conn
	try, unlock, holds, lock *sql.Stmt
}

func (s *preparedSession) run(ctx context.Context, st *sql.Stmt, call, name string) (int64, error) {
	return runBlock(call, func(args ...any) (sql.Result, error) { return st.ExecContext(ctx, args...) }, name)
}

func (s *preparedSession) TryLock(ctx context.Context, name string) (bool, error) {
	rc, err := s.run(ctx, s.try, "REQUEST", name)
	if err != nil {
		return false, err
	}
	return RequestResult(rc)
}

func (s *preparedSession) Unlock(ctx context.Context, name string) (bool, error) {
	rc, err := s.run(ctx, s.unlock, "RELEASE", name)
	if err != nil {
		return false, err
	}
	return ReleaseResult(rc)
}

func (s *preparedSession) Holds(ctx context.Context, name string) (bool, error) {
	rc, err := s.run(ctx, s.holds, "REQUEST", name)
	if err != nil {
		return false, err
	}
	return HoldsResult(rc)
}

// Close frees the statements and forgets the connection's wait statement.
func (s *preparedSession) Close() error {
	s.ops.waits.CompareAndDelete(s.conn, s.lock)
	for _, st := range []*sql.Stmt{s.try, s.unlock, s.holds, s.lock} {
		if st != nil {
			_ = st.Close()
		}
	}
	return nil
}
