package oracle

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/oralike"
)

// DefaultKillWait bounds how long Kill waits for the killed session to give
// up its user locks (SessionOps.KillWait); killPoll is the pause between
// checks.
const (
	DefaultKillWait = 5 * time.Second
	killPoll        = 50 * time.Millisecond
)

// killSQL formats the kill statement; ALTER SYSTEM takes no bind
// variables, so the session id is rebuilt from parsed integers, never
// spliced as given.
const killSQL = "ALTER SYSTEM KILL SESSION '%d,%d,@%d' IMMEDIATE"

// sessionHoldsSQL counts the user locks a session (sid, serial#, instance)
// still holds; zero once it has ended or been cleaned up.
const sessionHoldsSQL = "SELECT COUNT(*) FROM gv$lock l JOIN gv$session s ON s.inst_id = l.inst_id AND s.sid = l.sid" +
	" WHERE l.type = 'UL' AND l.lmode > 0 AND s.sid = :1 AND s.serial# = :2 AND s.inst_id = :3"

var sessionIDRE = regexp.MustCompile(`^\s*(\d{1,9})\s*,\s*(\d{1,9})\s*(?:,\s*@(\d{1,4})\s*)?$`)

// ErrMarkedForKill is matched by a *MarkedForKillError.
var ErrMarkedForKill = errors.New("session marked for kill")

// MarkedForKillError says the session was told to end but still held its
// user locks when Kill stopped waiting: Oracle answered ORA-00031 ("session
// marked for kill"), or the session had not been cleaned up yet. Its
// DBMS_LOCK locks are released only when it really ends (when its current
// call returns, or when PMON cleans it up); list the locks again to see
// when.
type MarkedForKillError struct {
	SessionID string
	Waited    time.Duration
	Err       error // ORA-00031, or nil when the kill itself succeeded
}

func (e *MarkedForKillError) Error() string {
	return fmt.Sprintf("session %s is marked for kill but still held its locks after %s: they are freed only when the session really ends", e.SessionID, e.Waited)
}

// Is makes errors.Is(err, ErrMarkedForKill) true.
func (e *MarkedForKillError) Is(target error) bool { return target == ErrMarkedForKill }

// Unwrap returns the server's ORA-00031, if any.
func (e *MarkedForKillError) Unwrap() error { return e.Err }

// Kill terminates the session whose id Holder returned ("sid,serial#" or
// "sid,serial#,@inst_id") with ALTER SYSTEM KILL SESSION … IMMEDIATE, then
// waits up to o.KillWait (default 5s) until that session holds no user lock
// any more, so its DBMS_LOCK locks are free when Kill returns nil.
//
// Errors: an id that is not of that form, or a session that does not exist
// (ORA-00030), match dialects.ErrInvalid; ORA-01031 is a
// *dialects.PrivilegeError for ALTER SYSTEM (Amazon RDS, where it cannot be
// granted, uses rdsadmin.rdsadmin_util.kill instead); a session still
// holding its locks after the wait (ORA-00031 "marked for kill" or a slow
// cleanup) is a *MarkedForKillError.
func (o *SessionOps) kill(ctx context.Context, db *sql.DB, sessionID string) error {
	sid, serial, inst, err := parseSessionID(sessionID)
	if err != nil {
		return dialects.Wrap(Name, "kill", err)
	}
	id := formatSessionID(sid, serial, inst)
	_, err = db.ExecContext(ctx, fmt.Sprintf(killSQL, sid, serial, inst))
	var marked error
	switch oraCode(err) {
	case 0:
		if err != nil {
			return dialects.Wrap(Name, "kill", fmt.Errorf("ALTER SYSTEM KILL SESSION '%s': %w", id, err))
		}
	case oraMarkedForKill:
		marked = err
	case oraInsufficientPrivs:
		priv := &dialects.PrivilegeError{
			Privilege: "ALTER SYSTEM",
			Grant:     "GRANT ALTER SYSTEM TO " + oralike.QuoteUser(sessionUser(ctx, db)),
			Err:       err,
		}
		return dialects.Wrap(Name, "kill", fmt.Errorf("%w (on Amazon RDS, where ALTER SYSTEM cannot be granted, run rdsadmin.rdsadmin_util.kill(%d, %d) instead)", priv, sid, serial))
	case oraNoSuchSession, oraInvalidSessionID:
		return dialects.Wrap(Name, "kill", fmt.Errorf("%w: session %s does not exist (it may have ended already): %v", dialects.ErrInvalid, id, err))
	case oraKillOwnSession:
		return dialects.Wrap(Name, "kill", fmt.Errorf("%w: session %s is the one running the kill: %v", dialects.ErrInvalid, id, err))
	default:
		return dialects.Wrap(Name, "kill", fmt.Errorf("ALTER SYSTEM KILL SESSION '%s': %w", id, err))
	}
	wait := o.KillWait
	if wait <= 0 {
		wait = DefaultKillWait
	}
	return dialects.Wrap(Name, "kill", waitLocksGone(ctx, db, sid, serial, inst, wait, marked))
}

// waitLocksGone polls until the killed session holds no user lock.
func waitLocksGone(ctx context.Context, db *sql.DB, sid, serial, inst int64, wait time.Duration, marked error) error {
	start := time.Now()
	for {
		var held int64
		if err := db.QueryRowContext(ctx, sessionHoldsSQL, sid, serial, inst).Scan(&held); err != nil {
			return fmt.Errorf("session %s was killed; checking that its locks are gone failed: %w", formatSessionID(sid, serial, inst), viewError(ctx, db, err))
		}
		if held == 0 {
			return nil
		}
		if time.Since(start) >= wait {
			return &MarkedForKillError{SessionID: formatSessionID(sid, serial, inst), Waited: wait, Err: marked}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("session %s was killed; waiting for its locks to be freed: %w", formatSessionID(sid, serial, inst), ctx.Err())
		case <-time.After(killPoll):
		}
	}
}

// parseSessionID reads "sid,serial#" or "sid,serial#,@inst_id"; the
// instance defaults to 1.
func parseSessionID(s string) (sid, serial, inst int64, err error) {
	m := sessionIDRE.FindStringSubmatch(s)
	if m == nil {
		return 0, 0, 0, dialects.Invalidf("session id %q is not of the form sid,serial# or sid,serial#,@inst_id", s)
	}
	sid, _ = strconv.ParseInt(m[1], 10, 64)
	serial, _ = strconv.ParseInt(m[2], 10, 64)
	inst = 1
	if m[3] != "" {
		inst, _ = strconv.ParseInt(m[3], 10, 64)
	}
	if inst == 0 {
		return 0, 0, 0, dialects.Invalidf("session id %q names instance 0; instances count from 1", s)
	}
	return sid, serial, inst, nil
}
