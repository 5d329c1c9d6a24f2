package sqlserver

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// publicPrincipalID is the principal_id of the role public, the principal
// every lock of this package is scoped to.
const publicPrincipalID = 0

// listSQL lists the application locks of the current database with their
// sessions. login_time is local server time; it is moved to UTC with the
// server's current offset (whole minutes) and, like the server's now, given
// as milliseconds since the Unix epoch. Sessions that are gone
// (request_session_id -2, -3) keep their lock row with NULL session
// columns.
var listSQL = `SELECT l.request_session_id, l.request_mode, l.request_status, l.request_owner_type, l.resource_description,
  s.login_name, COALESCE(c.client_net_address, s.host_name), s.program_name,
  ` + epochMs("DATEADD(minute, DATEDIFF(minute, GETDATE(), GETUTCDATE()), s.login_time)") + `,
  ` + epochMs("SYSUTCDATETIME()") + `
FROM sys.dm_tran_locks AS l
LEFT JOIN sys.dm_exec_sessions AS s ON s.session_id = l.request_session_id
LEFT JOIN sys.dm_exec_connections AS c ON c.session_id = l.request_session_id AND c.parent_connection_id IS NULL
WHERE l.resource_type = N'APPLICATION' AND l.resource_database_id = DB_ID()
ORDER BY l.resource_description, l.request_session_id`

// SessionLock is one application lock (sp_getapplock) of the current
// database, as sys.dm_tran_locks and sys.dm_exec_sessions show it.
type SessionLock struct {
	// Resource is the lock's resource as resource_description shows it:
	// its first 32 characters, which is all of it for the resources of
	// this package (see LockName).
	Resource string
	// PrincipalID is the database principal the lock is scoped to (0 for
	// public).
	PrincipalID int
	// Hash is the server's hash of the full resource, from
	// resource_description.
	Hash string
	// SessionID is request_session_id (negative for orphaned distributed
	// or deferred transactions).
	SessionID string
	// Mode is request_mode ("X" for an Exclusive lock).
	Mode string
	// Status is request_status: GRANT, WAIT or CONVERT.
	Status string
	// OwnerType is request_owner_type: SESSION for the locks of this
	// package, TRANSACTION for transaction-owned applocks.
	OwnerType string
	// Login, Client (client_net_address, else host_name) and Program
	// describe the session; empty when unknown.
	Login, Client, Program string
	// LoginTime is when the session logged in (UTC); zero when unknown.
	LoginTime time.Time
	// DBNow is the server's clock (UTC) when the list was read.
	DBNow time.Time
}

// Granted reports whether the lock is held (request_status GRANT; the
// documentation also spells it GRANTED).
func (l SessionLock) Granted() bool { return l.Status == "GRANT" || l.Status == "GRANTED" }

// ListSessionLocks reads every application lock of the current database,
// ordered by resource. It needs VIEW SERVER STATE on SQL Server (VIEW
// DATABASE STATE on Azure SQL Database); without it the server answers
// error 300 or 297, returned as is.
func ListSessionLocks(ctx context.Context, db *sql.DB) ([]SessionLock, error) {
	rows, err := db.QueryContext(ctx, listSQL)
	if err != nil {
		return nil, fmt.Errorf("read sys.dm_tran_locks: %w", err)
	}
	defer rows.Close()
	out := []SessionLock{}
	for rows.Next() {
		var (
			session                   sql.NullInt64
			mode, status, owner, desc sql.NullString
			login, client, program    sql.NullString
			loginMs, nowMs            sql.NullInt64
		)
		if err := rows.Scan(&session, &mode, &status, &owner, &desc, &login, &client, &program, &loginMs, &nowMs); err != nil {
			return nil, fmt.Errorf("read sys.dm_tran_locks: %w", err)
		}
		principal, resource, hash, ok := ParseResourceDescription(desc.String)
		if !ok {
			resource = strings.TrimSpace(desc.String)
			principal = -1
		}
		l := SessionLock{
			Resource: resource, PrincipalID: principal, Hash: hash,
			Mode: mode.String, Status: strings.TrimSpace(status.String), OwnerType: strings.TrimSpace(owner.String),
			Login: login.String, Client: client.String, Program: strings.TrimSpace(program.String),
		}
		if session.Valid {
			l.SessionID = strconv.FormatInt(session.Int64, 10)
		}
		if loginMs.Valid {
			l.LoginTime = time.UnixMilli(loginMs.Int64).UTC()
		}
		if nowMs.Valid {
			l.DBNow = time.UnixMilli(nowMs.Int64).UTC()
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read sys.dm_tran_locks: %w", err)
	}
	return out, nil
}

// ParseResourceDescription splits the resource_description of an
// APPLICATION lock, "<DbPrincipalId>:[<up to 32 characters>]:(<hash>)"
// (the documentation omits the brackets; servers print them, and pad the
// column with spaces), into its parts. The name may itself contain "]",
// ":" and "(": the hash is found from the end. ok is false for text of
// another shape.
func ParseResourceDescription(desc string) (principal int, resource, hash string, ok bool) {
	d := strings.TrimRight(desc, " ")
	head, rest, found := strings.Cut(d, ":")
	if !found {
		return 0, "", "", false
	}
	p, err := strconv.Atoi(strings.TrimSpace(head))
	if err != nil {
		return 0, "", "", false
	}
	end := strings.LastIndex(rest, ":(")
	if end < 0 || !strings.HasSuffix(rest, ")") {
		return 0, "", "", false
	}
	hash = rest[end+2 : len(rest)-1]
	name := rest[:end]
	if strings.HasPrefix(name, "[") && strings.HasSuffix(name, "]") && len(name) >= 2 {
		name = name[1 : len(name)-1]
	}
	return p, name, hash, true
}
