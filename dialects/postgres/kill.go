package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/schedlock/schedlock/dialects"
)

// killWait bounds how long Kill waits for a signalled backend to end.
const killWait = 5 * time.Second

// killPoll is the pause between checks that a signalled backend has ended.
const killPoll = 10 * time.Millisecond

// Kill terminates the backend whose pid (in decimal, as Holder returns it)
// is sessionID with SELECT pg_terminate_backend(pid), then waits up to 5s
// for it to leave pg_stat_activity, so the advisory locks it held are free
// when Kill returns nil.
//
// Errors: a sessionID that is not a pid, or a pid that is no backend
// (pg_terminate_backend answered false), match dialects.ErrInvalid; missing
// rights (SQLSTATE 42501) give a *dialects.PrivilegeError naming
// pg_signal_backend and its GRANT (or SUPERUSER, without a GRANT, when the
// target belongs to a superuser, which only a superuser may terminate).
func (SessionOps) Kill(ctx context.Context, db *sql.DB, sessionID string) error {
	pid, err := strconv.ParseInt(sessionID, 10, 32)
	if err != nil || pid <= 0 {
		return dialects.Wrap(Name, "kill", dialects.Invalidf("session id %q is not a PostgreSQL backend pid", sessionID))
	}
	var signalled bool
	err = db.QueryRowContext(ctx, "SELECT pg_terminate_backend($1::integer)", pid).Scan(&signalled)
	switch {
	case hasCode(err, codeInsufficientPrivilege):
		return dialects.Wrap(Name, "kill", terminatePrivilegeError(ctx, db, err))
	case err != nil:
		return dialects.Wrap(Name, "kill", fmt.Errorf("pg_terminate_backend(%d): %w", pid, err))
	case !signalled:
		return dialects.Wrap(Name, "kill", fmt.Errorf("%w: backend %d was not terminated: it is not a PostgreSQL backend (it may have ended already)", dialects.ErrInvalid, pid))
	}
	return dialects.Wrap(Name, "kill", waitBackendGone(ctx, db, pid))
}

// waitBackendGone polls pg_stat_activity until pid has left it.
func waitBackendGone(ctx context.Context, db *sql.DB, pid int64) error {
	deadline := time.Now().Add(killWait)
	for {
		var alive bool
		if err := db.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1::integer)", pid).Scan(&alive); err != nil {
			return fmt.Errorf("backend %d was signalled; checking that it ended failed: %w", pid, err)
		}
		if !alive {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("backend %d was signalled but had not ended after %s; its locks are still held", pid, killWait)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("backend %d was signalled; waiting for it to end: %w", pid, ctx.Err())
		case <-time.After(killPoll):
		}
	}
}

// terminatePrivilegeError turns a 42501 from pg_terminate_backend into a
// *dialects.PrivilegeError that names the fix for the current user.
func terminatePrivilegeError(ctx context.Context, db *sql.DB, err error) error {
	if pgErr := pgError(err); pgErr != nil && strings.Contains(strings.ToLower(pgErr.Message+" "+pgErr.Detail), "superuser") {
		return &dialects.PrivilegeError{
			Privilege: "SUPERUSER (the session belongs to a superuser, which only a superuser may terminate; pg_signal_backend is not enough)",
			Err:       err,
		}
	}
	user := "<user>"
	var current string
	if db.QueryRowContext(ctx, "SELECT current_user").Scan(&current) == nil && current != "" {
		user = pgx.Identifier{current}.Sanitize()
	}
	return &dialects.PrivilegeError{
		Privilege: "pg_signal_backend",
		Grant:     "GRANT pg_signal_backend TO " + user,
		Err:       err,
	}
}
