package dameng

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/dbmslock"
	"github.com/schedlock/schedlock/dialects/sqlkit"
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

// lockSQL waits on the server: REQUEST in mode 6 (exclusive) for up to
// the third bind's seconds, release_on_commit FALSE like tryLockSQL.
// Binds, positional: lock name, OUT return code, timeout.
const lockSQL = `DECLARE
  h VARCHAR(128);
BEGIN
  SYS.DBMS_LOCK.ALLOCATE_UNIQUE(?, h);
  ? := SYS.DBMS_LOCK.REQUEST(h, 6, ?, FALSE);
END;`

// newSessionLocker returns the DBMS_LOCK locker on db when access proved
// the DBMS_LOCK system package installed, and refusal(access) otherwise
// (see Backend.NewSessionLocker).
func newSessionLocker(db *sql.DB, access lockAccess) (dialects.Locker, error) {
	if !access.Usable {
		return nil, refusal(access)
	}
	return &sqlkit.SessionLocker{Dialect: Name, DB: db, Ops: &SessionOps{}}, nil
}

// SessionOps runs DBMS_LOCK on one connection. It implements
// sqlkit.SessionOps. Names pass through LockName. Session ids
// are V$SESSIONS.SESS_ID in decimal, what SP_CLOSE_SESSION takes.
type SessionOps struct {
	// Ops runs the session-lock blocks: TryLock, Unlock, Holds, Lock,
	// LockKey and Prepare.
	dbmslock.Ops[dbmsLock]

	// KillWait is how long Kill waits for a closed session to be gone
	// (default DefaultKillWait).
	KillWait time.Duration
}

// session runs the blocks; SessionOps reaches it through dbmslock.Ops.
var session = &dbmslock.Session{
	Blocks:   dbmslock.Blocks{TryLock: tryLockSQL, Unlock: unlockSQL, Holds: holdsSQL, Lock: lockSQL},
	LockName: LockName,
	Failed:   failed,
}

// dbmsLock is this dialect's dbmslock.Dialect: its Session is session.
type dbmsLock struct{}

// Session returns session.
func (dbmsLock) Session() *dbmslock.Session { return session }

var (
	_ sqlkit.SessionOps      = (*SessionOps)(nil)
	_ sqlkit.SessionPreparer = (*SessionOps)(nil)
	_ sqlkit.SessionWaiter   = (*SessionOps)(nil)
	_ sqlkit.SessionKeyer    = (*SessionOps)(nil)
)

// failed is the error of a session-lock block that failed, its server
// stack trimmed.
func failed(_ context.Context, _ *sql.Conn, call string, err error) error {
	return fmt.Errorf("DBMS_LOCK.%s: %w", call, trimmed(err))
}
