package dameng

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// The session-lock statements. Each is one anonymous DMSQL block, so one
// round trip: ALLOCATE_UNIQUE turns the name into a lock handle, then
// REQUEST (mode 6, exclusive; timeout 0; release_on_commit FALSE, so the
// lock lives until RELEASE or the end of the session) or RELEASE runs on
// it. Arguments are positional, placeholders are "?", and the return code
// comes back through an OUT bind (sql.Out).
//
// Oracle's ALLOCATE_UNIQUE commits; whether DM's does is [U], and harmless
// either way: these blocks only ever run on a lock's own pinned
// connection, which carries no transaction of the caller.
// SYS.DBMS_LOCK is named with its schema so that a user object called
// DBMS_LOCK cannot stand in for it.
const (
	tryLockSQL = `DECLARE
  h VARCHAR(128);
BEGIN
  SYS.DBMS_LOCK.ALLOCATE_UNIQUE(?, h);
  ? := SYS.DBMS_LOCK.REQUEST(h, 6, 0, FALSE);
END;`
	unlockSQL = `DECLARE
  h VARCHAR(128);
BEGIN
  SYS.DBMS_LOCK.ALLOCATE_UNIQUE(?, h);
  ? := SYS.DBMS_LOCK.RELEASE(h);
END;`
	// holdsSQL: a REQUEST without waiting answers 4 (already own) and
	// changes nothing when this session holds the lock; 0 means it did not
	// and has just taken it, so the block gives it back at once; 1 means
	// another session holds it.
	holdsSQL = `DECLARE
  h VARCHAR(128);
  rc INT;
  released INT;
BEGIN
  SYS.DBMS_LOCK.ALLOCATE_UNIQUE(?, h);
  rc := SYS.DBMS_LOCK.REQUEST(h, 6, 0, FALSE);
  IF rc = 0 THEN
    released := SYS.DBMS_LOCK.RELEASE(h);
  END IF;
  ? := rc;
END;`
)

// NewSessionLocker returns the DBMS_LOCK locker, only when the DBMS_LOCK
// system package is proven installed by Detect's probe (info.Facts; see
// NewSessionLockerContext for a pool that was not detected). Otherwise it refuses with an error
// matching dialects.ErrUnsupported that names the call installing the
// package (CALL SP_CREATE_SYSTEM_PACKAGES(1, 'DBMS_LOCK')) and the table
// strategy; it never hands out a locker that might not exclude.
func NewSessionLocker(db *sql.DB, info dialects.Info) (dialects.Locker, error) {
	if access := accessFor(info); !access.present {
		return nil, access.refusal()
	}
	return &dialects.SessionLocker{Dialect: Name, DB: db, Ops: &SessionOps{}}, nil
}

// SessionOps runs DBMS_LOCK on one connection. It implements
// dialects.SessionOps, dialects.HolderFinder (Holder) and
// dialects.SessionKiller (Kill). Names pass through LockName. Session ids
// are V$SESSIONS.SESS_ID in decimal, what SP_CLOSE_SESSION takes.
type SessionOps struct {
	// KillWait is how long Kill waits for a closed session to be gone
	// (default DefaultKillWait).
	KillWait time.Duration

	// waits holds lockSQL prepared on each lock connection (*sql.Conn →
	// *sql.Stmt), from Prepare until the prepared session's Close, for
	// Lock.
	waits sync.Map
}

var (
	_ dialects.SessionOps    = (*SessionOps)(nil)
	_ dialects.SessionKiller = (*SessionOps)(nil)
)

// TryLock runs DBMS_LOCK.REQUEST without waiting and maps its answer with
// RequestResult.
func (o *SessionOps) TryLock(ctx context.Context, conn *sql.Conn, name string) (bool, error) {
	rc, err := run(ctx, conn, "REQUEST", tryLockSQL, name)
	if err != nil {
		return false, err
	}
	return RequestResult(rc)
}

// Unlock runs DBMS_LOCK.RELEASE and maps its answer with ReleaseResult:
// another session's lock is never freed.
func (o *SessionOps) Unlock(ctx context.Context, conn *sql.Conn, name string) (bool, error) {
	rc, err := run(ctx, conn, "RELEASE", unlockSQL, name)
	if err != nil {
		return false, err
	}
	return ReleaseResult(rc)
}

// Holds asks DBMS_LOCK.REQUEST whether conn's session already owns name
// (see holdsSQL) and maps the answer with HoldsResult.
func (o *SessionOps) Holds(ctx context.Context, conn *sql.Conn, name string) (bool, error) {
	rc, err := run(ctx, conn, "REQUEST", holdsSQL, name)
	if err != nil {
		return false, err
	}
	return HoldsResult(rc)
}

// run executes one session-lock block on conn and returns its return
// code.
func run(ctx context.Context, conn *sql.Conn, call, block, name string) (int64, error) {
	return runBlock(call, func(args ...any) (sql.Result, error) {
		return conn.ExecContext(ctx, block, args...)
	}, name)
}

// runBlock executes one session-lock block through exec (on a connection,
// or a statement prepared on it) with the lock name, the OUT return code
// and then extra as its binds, and returns the return code.
func runBlock(call string, exec func(args ...any) (sql.Result, error), name string, extra ...any) (int64, error) {
	var rc int64
	args := append([]any{LockName(name), sql.Out{Dest: &rc}}, extra...)
	if _, err := exec(args...); err != nil {
		return 0, fmt.Errorf("DBMS_LOCK.%s: %w", call, trimmed(err))
	}
	return rc, nil
}
