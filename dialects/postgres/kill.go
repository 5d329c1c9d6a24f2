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
// when Kill returns nil. On KingbaseES o.Catalog (the one detection
// found) names the function and view (sys_terminate_backend,
// sys_stat_activity); a server with neither name gives an error matching
// dialects.ErrUnsupported.
//
// Errors: a sessionID that is not a pid, or a pid that is no backend
// (pg_terminate_backend answered false), match dialects.ErrInvalid; missing
// rights (SQLSTATE 42501) give a *dialects.PrivilegeError naming
// pg_signal_backend and its GRANT (or SUPERUSER, without a GRANT, when the
// target belongs to a superuser, which only a superuser may terminate).
func (o SessionOps) kill(ctx context.Context, db *sql.DB, sessionID string) error {
	c := o.namesFor(db)
	if c.Terminate == "" {
		return dialects.Wrap(Name, "kill", fmt.Errorf("%w: the server has neither pg_terminate_backend nor sys_terminate_backend to end another session", dialects.ErrUnsupported))
	}
	pid, err := strconv.ParseInt(sessionID, 10, 32)
	if err != nil || pid <= 0 {
		return dialects.Wrap(Name, "kill", dialects.Invalidf("session id %q is not a PostgreSQL backend pid", sessionID))
	}
	var signalled bool
	err = db.QueryRowContext(ctx, c.terminateSQL(), pid).Scan(&signalled)
	switch {
	case hasCode(err, codeInsufficientPrivilege):
		return dialects.Wrap(Name, "kill", terminatePrivilegeError(ctx, db, c, err))
	case err != nil:
		return dialects.Wrap(Name, "kill", fmt.Errorf("%s(%d): %w", c.Terminate, pid, err))
	case !signalled:
		return dialects.Wrap(Name, "kill", fmt.Errorf("%w: backend %d was not terminated: it is not a PostgreSQL backend (it may have ended already)", dialects.ErrInvalid, pid))
	}
	return dialects.Wrap(Name, "kill", waitBackendGone(ctx, db, c, pid))
}

// waitBackendGone polls pg_stat_activity (c.Activity) until pid has left
// it; without that view it only waits for the backend's locks to go.
func waitBackendGone(ctx context.Context, db *sql.DB, c Catalog, pid int64) error {
	alive := c.aliveSQL()
	switch {
	case c.Activity == "" && c.Locks == "":
		return nil // nothing to watch: the signal is all there is
	case c.Activity == "":
		alive = "SELECT EXISTS (SELECT 1 FROM " + c.Locks + " WHERE pid = $1::integer)"
	}
	deadline := time.Now().Add(killWait)
	for {
		var running bool
		if err := db.QueryRowContext(ctx, alive, pid).Scan(&running); err != nil {
			return fmt.Errorf("backend %d was signalled; checking that it ended failed: %w", pid, err)
		}
		if !running {
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
func terminatePrivilegeError(ctx context.Context, db *sql.DB, c Catalog, err error) error {
	if c.Terminate != PostgresCatalog.Terminate {
		return &dialects.PrivilegeError{
			Privilege: "the right to end other users' sessions with " + c.Terminate +
				" (a superuser, or the KingbaseES counterpart of pg_signal_backend, whose name schedlock does not probe)",
			Err: err,
		}
	}
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
