package oracle

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/dbmslock"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// The session-lock statements. Each is one anonymous PL/SQL block, so one
// round trip, that first turns the name into a lock handle with
// ALLOCATE_UNIQUE. ALLOCATE_UNIQUE commits: harmless here, because these
// blocks only ever run on a lock's own pinned connection, which carries no
// transaction of the caller (sqlkit.SessionLocker keeps its lock
// connections to itself and never lends them out). Calling it every time also
// renews the name's entry in DBMS_LOCK_ALLOCATED (kept 10 days after the
// last call), so the watch of a held lock (Holds, every second) keeps its
// handle from ever being reclaimed.
//
// SYS.DBMS_LOCK is named with its schema, so a local object called
// DBMS_LOCK cannot stand in for it.
const (
	// tryLockSQL: REQUEST in exclusive mode without waiting; the lock stays
	// across COMMIT and ROLLBACK (release_on_commit => FALSE) until
	// RELEASE or the end of the session.
	tryLockSQL = `DECLARE
  h VARCHAR2(128);
BEGIN
  SYS.DBMS_LOCK.ALLOCATE_UNIQUE(lockname => :1, lockhandle => h);
  :2 := SYS.DBMS_LOCK.REQUEST(lockhandle => h, lockmode => SYS.DBMS_LOCK.X_MODE, timeout => 0, release_on_commit => FALSE);
END;`
	// unlockSQL: RELEASE answers 4 when this session does not own the lock,
	// which it leaves alone.
	unlockSQL = `DECLARE
  h VARCHAR2(128);
BEGIN
  SYS.DBMS_LOCK.ALLOCATE_UNIQUE(lockname => :1, lockhandle => h);
  :2 := SYS.DBMS_LOCK.RELEASE(lockhandle => h);
END;`
	// holdsSQL: DBMS_LOCK has no "do I hold it" function, and V$LOCK needs
	// privileges. A REQUEST without waiting answers 4 (already own) and
	// changes nothing when this session holds the lock; 0 means it did not
	// and has just taken it, so the block gives it back at once; 1 means
	// another session holds it.
	holdsSQL = `DECLARE
  h VARCHAR2(128);
  rc INTEGER;
  released INTEGER;
BEGIN
  SYS.DBMS_LOCK.ALLOCATE_UNIQUE(lockname => :1, lockhandle => h);
  rc := SYS.DBMS_LOCK.REQUEST(lockhandle => h, lockmode => SYS.DBMS_LOCK.X_MODE, timeout => 0, release_on_commit => FALSE);
  IF rc = 0 THEN
    released := SYS.DBMS_LOCK.RELEASE(lockhandle => h);
  END IF;
  :2 := rc;
END;`
)

// lockSQL waits on the server: REQUEST in exclusive mode for up to :3
// seconds, the lock kept across COMMIT and ROLLBACK like tryLockSQL's.
// Binds: lock name, OUT return code, timeout (in the order they appear,
// as go-ora binds).
const lockSQL = `DECLARE
  h VARCHAR2(128);
BEGIN
  SYS.DBMS_LOCK.ALLOCATE_UNIQUE(lockname => :1, lockhandle => h);
  :2 := SYS.DBMS_LOCK.REQUEST(lockhandle => h, lockmode => SYS.DBMS_LOCK.X_MODE, timeout => :3, release_on_commit => FALSE);
END;`

// newSessionLocker returns the DBMS_LOCK locker on db, or the
// *dialects.PrivilegeError with the GRANT when access proved that the user
// may not execute SYS.DBMS_LOCK (see Backend.NewSessionLocker).
func newSessionLocker(db *sql.DB, access lockAccess) (dialects.Locker, error) {
	if access.Known && !access.Usable {
		return nil, fmt.Errorf("%w; or %s", privilegeDBMSLock(access.User, access.Err), dialects.UseTableStrategy)
	}
	return &sqlkit.SessionLocker{Dialect: Name, DB: db, Ops: &SessionOps{}}, nil
}

// SessionOps runs DBMS_LOCK on one connection. It implements
// sqlkit.SessionOps. Names pass through LockName. Session ids
// are "sid,serial#,@inst_id", the form ALTER SYSTEM KILL SESSION takes.
type SessionOps struct {
	// Ops runs the session-lock blocks: TryLock, Unlock, Holds, Lock,
	// LockKey and Prepare.
	dbmslock.Ops[dbmsLock]

	// KillWait is how long Kill waits for a killed session to give up its
	// locks (default DefaultKillWait).
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

// failed is the error of a session-lock block that failed: a missing
// EXECUTE grant becomes a *dialects.PrivilegeError.
func failed(ctx context.Context, conn *sql.Conn, call string, err error) error {
	if missingDBMSLock(err) {
		return privilegeDBMSLock(sessionUser(ctx, conn), err)
	}
	return fmt.Errorf("DBMS_LOCK.%s: %w", call, err)
}
