package dameng

import (
	"context"
	"database/sql"
	"strconv"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// DBMS_LOCK locks in DM's views [U: the whole mapping is unverified on a
// live server; the live suite's kill check and TestLiveListSessionLocks
// prove or refute it]. V$LOCK has one row per lock a transaction holds or
// waits for (TRX_ID, LTYPE, LMODE, BLOCKED, TABLE_ID); V$SESSIONS maps a
// transaction to its session (TRX_ID → SESS_ID, USER_NAME, CLNT_IP,
// APPNAME, CREATE_TIME). A DBMS_LOCK lock is taken to be an object lock
// (LTYPE 'OBJECT') whose TABLE_ID is the lock id that
// SYS.DBMS_LOCK_ALLOCATED maps to its name, as Oracle's DBMS_LOCK_ALLOCATED
// does. BLOCKED = 1 marks a request that waits (schedlock's own requests
// never wait; V$TRXWAIT shows what a waiting transaction waits for). The
// session's age is read against the database's own clock, because
// CREATE_TIME is local server time.
var (
	sessionLockColumns = "s.SESS_ID, a.NAME, a.LOCKID, l.LMODE, l.BLOCKED, s.USER_NAME, s.CLNT_IP, s.APPNAME, " +
		"DATEDIFF(SS, s.CREATE_TIME, SYSDATE), " + epochMs(sqlNow)
	sessionLockFrom = " FROM V$LOCK l" +
		" JOIN SYS.DBMS_LOCK_ALLOCATED a ON a.LOCKID = l.TABLE_ID" +
		" JOIN V$SESSIONS s ON s.TRX_ID = l.TRX_ID" +
		" WHERE l.LTYPE = 'OBJECT'"
	listSessionLocksSQL = "SELECT " + sessionLockColumns + sessionLockFrom + " ORDER BY a.NAME, l.BLOCKED, s.SESS_ID"
)

// SessionLock is one DBMS_LOCK lock held or awaited by a session, as
// ListSessionLocks reads it.
type SessionLock struct {
	// LockName is the DBMS_LOCK name (SCHEDLOCK$… for schedlock's locks).
	LockName string
	// Name is the schedlock name inside LockName (see SessionLockName), or
	// "" for a lock another application allocated.
	Name string
	// LockID is the DBMS_LOCK lock id.
	LockID int64
	// SessionID is V$SESSIONS.SESS_ID in decimal: what Kill takes.
	SessionID string
	// Granted is true for a held lock, false for a session waiting for it.
	Granted bool
	// Mode is V$LOCK.LMODE ("X" for exclusive).
	Mode string
	// User, Client and Application describe the session (USER_NAME,
	// CLNT_IP, APPNAME).
	User, Client, Application string
	// SessionAge is how long ago the session was created.
	SessionAge time.Duration
	// DBNow is the database's clock (UTC) when the list was read.
	DBNow time.Time
}

// ListSessionLocks lists every DBMS_LOCK lock held or awaited on the
// server, schedlock's and other applications', ordered by name, holders
// first. It needs SELECT on V$LOCK, V$SESSIONS and SYS.DBMS_LOCK_ALLOCATED;
// the server's refusal is returned as is. An empty result is an empty,
// non-nil slice.
func ListSessionLocks(ctx context.Context, db *sql.DB) ([]SessionLock, error) {
	rows, err := db.QueryContext(ctx, listSessionLocksSQL)
	if err != nil {
		return nil, dialects.Wrap(Name, "list session locks", trimmed(err))
	}
	defer rows.Close()
	out := []SessionLock{}
	for rows.Next() {
		var (
			sessID, lockID, blocked, age, nowMs sql.NullInt64
			lockName, mode, user, client, app   sql.NullString
		)
		if err := rows.Scan(&sessID, &lockName, &lockID, &mode, &blocked, &user, &client, &app, &age, &nowMs); err != nil {
			return nil, dialects.Wrap(Name, "list session locks", err)
		}
		name, _ := SessionLockName(lockName.String)
		l := SessionLock{
			LockName:    lockName.String,
			Name:        name,
			LockID:      lockID.Int64,
			Granted:     blocked.Int64 == 0,
			Mode:        mode.String,
			User:        user.String,
			Client:      client.String,
			Application: app.String,
			SessionAge:  time.Duration(age.Int64) * time.Second,
		}
		if sessID.Valid {
			l.SessionID = strconv.FormatInt(sessID.Int64, 10)
		}
		if nowMs.Valid {
			l.DBNow = time.UnixMilli(nowMs.Int64).UTC()
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, dialects.Wrap(Name, "list session locks", err)
	}
	return out, nil
}
