package sqlserver

import (
	"context"
	"database/sql"
	"math"
	"time"

	"github.com/schedlock/schedlock/dialects/sqlkit"
)

var (
	_ sqlkit.SessionPreparer = (*SessionOps)(nil)
	_ sqlkit.SessionWaiter   = (*SessionOps)(nil)
	_ sqlkit.SessionKeyer    = (*SessionOps)(nil)
)

// lockSQL waits on the server: sp_getapplock with @LockTimeout = @p2
// milliseconds, its return code as a result row (1 when granted after
// waiting, -1 when the timeout ran out).
const lockSQL = `DECLARE @rc int;
EXEC @rc = sp_getapplock @Resource = @p1, @LockMode = 'Exclusive', @LockOwner = 'Session', @LockTimeout = @p2, @DbPrincipal = 'public';
SELECT @rc;`

// LockKey is the resource the server locks (LockName): names with one
// resource are one lock. sp_getapplock is re-entrant within a session, so
// without this two leases of one process could share a lock.
func (o *SessionOps) LockKey(name string) string { return LockName(name) }

// Lock waits on the server for up to wait: sp_getapplock with
// @LockTimeout in milliseconds, rounded up (at least 1: 0 would not wait,
// -1 would wait forever; at most 2^31-1). Its return code is mapped like
// TryLock's: 0 and 1 granted, -1 the lock stayed taken past the timeout
// (false), -2 (canceled), -3 (deadlock victim) and -999 (parameter error)
// an *AppLockError matching ErrLockCanceled, ErrDeadlockVictim or
// ErrLockCall.
//
// Cancelling ctx ends the wait: go-mssqldb sends an attention, the server
// abandons the batch and the driver keeps the connection; the
// SessionLocker, which runs a wait on a connection holding no other lock,
// then closes that connection anyway, so a grant racing with the
// attention is freed with it.
func (o *SessionOps) Lock(ctx context.Context, conn *sql.Conn, name string, wait time.Duration) (bool, error) {
	resource := LockName(name)
	return o.scanGetAppLock(conn.QueryRowContext(ctx, lockSQL, resource, lockTimeoutMs(wait)), resource)
}

// lockTimeoutMs is wait as sp_getapplock's @LockTimeout: whole
// milliseconds rounded up, within [1, MaxInt32].
func lockTimeoutMs(wait time.Duration) int64 {
	ms := int64(math.Ceil(float64(wait) / float64(time.Millisecond)))
	return min(max(ms, 1), math.MaxInt32)
}

// Prepare prepares the three lock statements on conn. go-mssqldb prepares
// on the client (no round trip) and sends each execution as one
// sp_executesql request, so every acquire, release and check is one round
// trip on any driver settings; a driver that prepares on the server gets
// the same with the statement parsed once.
func (o *SessionOps) Prepare(ctx context.Context, conn *sql.Conn) (sqlkit.SessionStatements, error) {
	s := &preparedSession{ops: o}
	var err error
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{{&s.try, tryLockSQL}, {&s.unlock, unlockSQL}, {&s.holds, holdsSQL}} {
		if *p.stmt, err = conn.PrepareContext(ctx, p.sql); err != nil {
			_ = s.Close()
			return nil, err
		}
	}
	return s, nil
}

// preparedSession is SessionOps prepared on one lock connection.
type preparedSession struct {
	ops                *SessionOps
	try, unlock, holds *sql.Stmt
}

func (s *preparedSession) TryLock(ctx context.Context, name string) (bool, error) {
	resource := LockName(name)
	return s.ops.scanGetAppLock(s.try.QueryRowContext(ctx, resource), resource)
}

func (s *preparedSession) Unlock(ctx context.Context, name string) (bool, error) {
	resource := LockName(name)
	return scanRelease(s.unlock.QueryRowContext(ctx, resource), resource)
}

func (s *preparedSession) Holds(ctx context.Context, name string) (bool, error) {
	return scanHolds(s.holds.QueryRowContext(ctx, LockName(name)))
}

func (s *preparedSession) Close() error {
	for _, st := range []*sql.Stmt{s.try, s.unlock, s.holds} {
		if st != nil {
			_ = st.Close()
		}
	}
	return nil
}
