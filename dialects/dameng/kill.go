package dameng

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// DefaultKillWait bounds how long Kill waits for a closed session to
// disappear from V$SESSIONS (SessionOps.KillWait); killPoll is the pause
// between checks.
const (
	DefaultKillWait = 5 * time.Second
	killPoll        = 50 * time.Millisecond
)

// Kill statements. SP_CLOSE_SESSION ends a session and, with it, its
// DBMS_LOCK locks; it needs the DBA role [U].
const (
	killSQL         = "CALL SP_CLOSE_SESSION(?)"
	sessionAliveSQL = "SELECT COUNT(*) FROM V$SESSIONS WHERE SESS_ID = ?"
)

// Kill closes the session whose id Holder returned (V$SESSIONS.SESS_ID in
// decimal) with SP_CLOSE_SESSION, then waits up to o.KillWait (default 5s)
// until it is gone from V$SESSIONS, so its locks are free when Kill
// returns nil. The id is parsed and bound as a number, never spliced.
// An id that is not a positive integer matches dialects.ErrInvalid; a
// refusal that speaks of privileges is a *dialects.PrivilegeError.
func (o *SessionOps) kill(ctx context.Context, db *sql.DB, sessionID string) error {
	id, err := strconv.ParseInt(strings.TrimSpace(sessionID), 10, 64)
	if err != nil || id <= 0 {
		return dialects.Wrap(Name, "kill", dialects.Invalidf("session id %q is not a positive integer (V$SESSIONS.SESS_ID)", sessionID))
	}
	if _, err := db.ExecContext(ctx, killSQL, id); err != nil {
		if mentionsPrivilege(err) {
			return dialects.Wrap(Name, "kill", &dialects.PrivilegeError{
				Privilege: "DBA (to call SP_CLOSE_SESSION on another user's session)",
				Grant:     "GRANT DBA TO <user>",
				Err:       trimmed(err),
			})
		}
		return dialects.Wrap(Name, "kill", fmt.Errorf("SP_CLOSE_SESSION(%d): %w", id, trimmed(err)))
	}
	wait := o.KillWait
	if wait <= 0 {
		wait = DefaultKillWait
	}
	return dialects.Wrap(Name, "kill", waitSessionGone(ctx, db, id, wait))
}

// waitSessionGone polls V$SESSIONS until the closed session is gone.
func waitSessionGone(ctx context.Context, db *sql.DB, id int64, wait time.Duration) error {
	start := time.Now()
	for {
		var alive int64
		if err := db.QueryRowContext(ctx, sessionAliveSQL, id).Scan(&alive); err != nil {
			return fmt.Errorf("session %d was closed; checking that it is gone failed: %w", id, trimmed(err))
		}
		if alive == 0 {
			return nil
		}
		if time.Since(start) >= wait {
			return fmt.Errorf("session %d was closed but is still in V$SESSIONS after %s: its locks are freed only when it ends", id, wait)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("session %d was closed; waiting for it to end: %w", id, ctx.Err())
		case <-time.After(killPoll):
		}
	}
}

// mentionsPrivilege reports an error about missing rights, in DM's
// Chinese or English messages ("权限不足", "no privilege", "insufficient
// privileges") [U: the exact code is unverified, so the text decides].
func mentionsPrivilege(err error) bool {
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "权限") || strings.Contains(msg, "privilege")
}
