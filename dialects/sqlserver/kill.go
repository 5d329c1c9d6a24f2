package sqlserver

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/schedlock/schedlock/dialects"
)

// Kill terminates the session whose session_id Holder returned, with
// KILL <id>; its session-owned application locks are freed. KILL takes no
// parameter, so the id must be a positive integer and is formatted, never
// spliced as text. A refusal for lack of permission (error 6102) is a
// *dialects.PrivilegeError naming ALTER ANY CONNECTION (Azure SQL Database:
// KILL DATABASE CONNECTION) and the GRANT that fixes it.
func (o *SessionOps) kill(ctx context.Context, db *sql.DB, sessionID string) error {
	id, err := strconv.ParseInt(strings.TrimSpace(sessionID), 10, 64)
	if err != nil || id <= 0 || id > math.MaxInt32 {
		return dialects.Wrap(Name, "kill", dialects.Invalidf("session id %q is not a positive integer", sessionID))
	}
	_, err = db.ExecContext(ctx, "KILL "+strconv.FormatInt(id, 10))
	switch {
	case err == nil:
		return nil
	case hasNumber(err, errKillDenied):
		return dialects.Wrap(Name, "kill", killPrivilege(ctx, db, o.Info, err))
	case hasNumber(err, errNoSuchSession):
		return dialects.Wrap(Name, "kill", fmt.Errorf("session %d no longer exists: %w", id, err))
	case hasNumber(err, errKillOwnSession, errKillSystemSession):
		return dialects.Wrap(Name, "kill", dialects.Invalidf("session %d cannot be killed: %v", id, err))
	}
	return dialects.Wrap(Name, "kill", fmt.Errorf("KILL %d: %w", id, err))
}

// principalsSQL names the caller: its login (server permissions are
// granted to it) and its user in the current database.
const principalsSQL = `SELECT SUSER_SNAME(), USER_NAME()`

// principals returns the caller's login and database user, quoted as
// identifiers for a GRANT, or placeholders when they cannot be read.
func principals(ctx context.Context, db *sql.DB) (login, user string) {
	var l, u sql.NullString
	if err := db.QueryRowContext(ctx, principalsSQL).Scan(&l, &u); err != nil {
		return "[<login>]", "[<user>]"
	}
	login, user = "[<login>]", "[<user>]"
	if l.String != "" {
		login = quoteName(l.String)
	}
	if u.String != "" {
		user = quoteName(u.String)
	}
	return login, user
}

// quoteName quotes an identifier with brackets, as QUOTENAME does.
func quoteName(s string) string { return "[" + strings.ReplaceAll(s, "]", "]]") + "]" }

// azureDatabase reports Azure SQL Database, where permissions are granted
// per database rather than per server.
func azureDatabase(info dialects.Info) bool { return info.Variant == VariantAzureSQLDatabase }

// killPrivilege is the *dialects.PrivilegeError for a refused KILL.
func killPrivilege(ctx context.Context, db *sql.DB, info dialects.Info, cause error) error {
	login, user := principals(ctx, db)
	if azureDatabase(info) {
		return &dialects.PrivilegeError{Privilege: "KILL DATABASE CONNECTION", Grant: "GRANT KILL DATABASE CONNECTION TO " + user, Err: cause}
	}
	return &dialects.PrivilegeError{Privilege: "ALTER ANY CONNECTION", Grant: "USE master; GRANT ALTER ANY CONNECTION TO " + login, Err: cause}
}

// viewStatePrivilege is the *dialects.PrivilegeError for a refused read of
// sys.dm_tran_locks.
func viewStatePrivilege(ctx context.Context, db *sql.DB, info dialects.Info, cause error) error {
	p := viewStateGrant(ctx, db, info)
	return &dialects.PrivilegeError{Privilege: p.Privilege, Grant: p.Grant, Err: cause}
}

// viewStateGrant is the permission that shows other sessions' locks.
func viewStateGrant(ctx context.Context, db *sql.DB, info dialects.Info) dialects.MissingPrivilege {
	login, user := principals(ctx, db)
	const neededFor = "listing session locks and naming their holders (sys.dm_tran_locks, sys.dm_exec_sessions)"
	if azureDatabase(info) {
		return dialects.MissingPrivilege{Privilege: "VIEW DATABASE STATE", NeededFor: neededFor, Grant: "GRANT VIEW DATABASE STATE TO " + user}
	}
	return dialects.MissingPrivilege{Privilege: "VIEW SERVER STATE", NeededFor: neededFor, Grant: "USE master; GRANT VIEW SERVER STATE TO " + login}
}
