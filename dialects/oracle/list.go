package oracle

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/oralike"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// DBMS_LOCK locks are user locks, type 'UL', in GV$LOCK, ID1 being the lock
// id that SYS.DBMS_LOCK_ALLOCATED maps to the name. The GV$ views cover
// every instance of a RAC cluster (a single instance is instance 1), so a
// holder on another node is found too. LMODE 6 is exclusive; REQUEST > 0
// with LMODE 0 is a session waiting. CTIME counts the seconds in the
// current mode; the session's age is read against the database's own
// SYSDATE, because LOGON_TIME is a DATE in the server's time zone. The last
// column is the database clock (UTC) in epoch milliseconds, to place both
// durations in time.
const (
	sessionLockColumns = "l.inst_id, l.sid, s.serial#, a.name, a.lockid, l.lmode, l.request, l.ctime, " +
		"s.username, s.machine, s.program, ROUND((SYSDATE - s.logon_time) * 86400)"
	sessionLockFrom = " FROM gv$lock l" +
		" JOIN sys.dbms_lock_allocated a ON a.lockid = l.id1" +
		" JOIN gv$session s ON s.inst_id = l.inst_id AND s.sid = l.sid" +
		" WHERE l.type = 'UL'"
)

var (
	listSessionLocksSQL = "SELECT " + sessionLockColumns + ", " + epochMs(sqlNow) + sessionLockFrom + " ORDER BY a.name, l.lmode DESC, l.ctime DESC"
	// sessionLockSQL reads the holder of one DBMS_LOCK name (the longest
	// held first, should more than one row show).
	sessionLockSQL = "SELECT " + sessionLockColumns + ", " + epochMs(sqlNow) + sessionLockFrom + " AND l.lmode > 0 AND a.name = :1 ORDER BY l.ctime DESC"
)

// SessionLock is one DBMS_LOCK lock held or awaited by a session, as
// ListSessionLocks reads it.
type SessionLock struct {
	// LockName is the DBMS_LOCK name (SCHEDLOCK$… for schedlock's locks).
	LockName string
	// Name is the schedlock name inside LockName (see SessionLockName), or
	// "" for a lock another application allocated.
	Name string
	// LockID is the DBMS_LOCK lock id (GV$LOCK.ID1).
	LockID int64
	// SessionID is "sid,serial#,@inst_id": what Kill takes.
	SessionID string
	SID       int64
	Serial    int64
	Instance  int64
	// Granted is true for a held lock, false for a session waiting for it.
	Granted bool
	// Mode and Request are GV$LOCK.LMODE and REQUEST (6 = exclusive).
	Mode    int64
	Request int64
	// InMode is how long the session has held (or waited for) the lock.
	InMode time.Duration
	// User, Machine and Program describe the session (GV$SESSION).
	User    string
	Machine string
	Program string
	// SessionAge is how long ago the session logged on.
	SessionAge time.Duration
	// DBNow is the database clock (UTC) when the lock was read.
	DBNow time.Time
}

// ListSessionLocks lists every DBMS_LOCK lock held or awaited on the
// database (every instance of a RAC cluster), schedlock's and other
// applications', ordered by name, holders first. It needs SELECT on
// SYS.GV_$LOCK, SYS.GV_$SESSION and SYS.DBMS_LOCK_ALLOCATED; without them
// it returns a *dialects.PrivilegeError with the grants. An empty result is
// an empty, non-nil slice.
func ListSessionLocks(ctx context.Context, db *sql.DB) ([]SessionLock, error) {
	locks, err := readSessionLocks(ctx, db, listSessionLocksSQL)
	return locks, dialects.Wrap(Name, "list session locks", err)
}

// readSessionLocks runs query, which selects sessionLockColumns and the
// database clock, and reads its rows.
func readSessionLocks(ctx context.Context, db *sql.DB, query string, args ...any) ([]SessionLock, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, viewError(ctx, db, err)
	}
	defer rows.Close()
	out := []SessionLock{}
	for rows.Next() {
		var (
			lockName, user, machine, program sql.NullString
			inst, sid, serial, lockID        int64
			mode, request, ctime, age, now   sql.NullInt64
		)
		if err := rows.Scan(&inst, &sid, &serial, &lockName, &lockID, &mode, &request, &ctime, &user, &machine, &program, &age, &now); err != nil {
			return nil, err
		}
		name, _ := SessionLockName(lockName.String)
		out = append(out, SessionLock{
			LockName:   lockName.String,
			Name:       name,
			LockID:     lockID,
			SessionID:  formatSessionID(sid, serial, inst),
			SID:        sid,
			Serial:     serial,
			Instance:   inst,
			Granted:    mode.Int64 > 0,
			Mode:       mode.Int64,
			Request:    request.Int64,
			InMode:     time.Duration(ctime.Int64) * time.Second,
			User:       user.String,
			Machine:    machine.String,
			Program:    program.String,
			SessionAge: time.Duration(age.Int64) * time.Second,
			DBNow:      sqlkit.NullMillis(now),
		})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, rows.Close()
}

// sessionID formats a session as ALTER SYSTEM KILL SESSION takes it.
func formatSessionID(sid, serial, inst int64) string {
	return strconv.FormatInt(sid, 10) + "," + strconv.FormatInt(serial, 10) + ",@" + strconv.FormatInt(inst, 10)
}

// viewError turns "table or view does not exist" and "insufficient
// privileges" on the lock views into a *dialects.PrivilegeError with the
// grants; other errors pass unchanged.
func viewError(ctx context.Context, db *sql.DB, err error) error {
	switch oraCode(err) {
	case oraNoSuchTable, oraInsufficientPrivs:
		user := oralike.QuoteUser(sessionUser(ctx, db))
		return &dialects.PrivilegeError{
			Privilege: "SELECT ON SYS.GV_$LOCK, SYS.GV_$SESSION and SYS.DBMS_LOCK_ALLOCATED",
			Grant: fmt.Sprintf("GRANT SELECT ON SYS.GV_$LOCK TO %[1]s; GRANT SELECT ON SYS.GV_$SESSION TO %[1]s; GRANT SELECT ON SYS.DBMS_LOCK_ALLOCATED TO %[1]s",
				user),
			Err: err,
		}
	default:
		return err
	}
}
