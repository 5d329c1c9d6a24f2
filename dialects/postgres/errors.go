package postgres

import (
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/schedlock/schedlock/dialects"
)

// SQLSTATE codes this package reacts to.
const (
	codeUndefinedTable        = "42P01"
	codeInsufficientPrivilege = "42501"
	codeTooManyConnections    = "53300"
)

// pgError returns the server error inside err, or nil.
func pgError(err error) *pgconn.PgError {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr
	}
	return nil
}

// hasCode reports whether err carries the SQLSTATE code.
func hasCode(err error, code string) bool {
	pgErr := pgError(err)
	return pgErr != nil && pgErr.Code == code
}

// ClassifyError returns a *dialects.ConnLimitError for a server that
// refused a connection with SQLSTATE 53300 (too_many_connections), naming
// the limit from the server's message:
//
//   - "sorry, too many clients already", or "remaining connection slots
//     are reserved for …": max_connections, raised with ALTER SYSTEM and a
//     restart;
//   - `too many connections for role "app"`: the role's CONNECTION LIMIT
//     (pg_roles.rolconnlimit), raised with ALTER ROLE;
//   - `too many connections for database "db"`: the database's CONNECTION
//     LIMIT (pg_database.datconnlimit), raised with ALTER DATABASE.
//
// Every other error, and nil, is returned unchanged.
func ClassifyError(err error) error {
	pgErr := pgError(err)
	if pgErr == nil || pgErr.Code != codeTooManyConnections {
		return err
	}
	msg := pgErr.Message
	switch {
	case strings.HasPrefix(msg, "too many connections for role "):
		role := quoted(msg)
		return &dialects.ConnLimitError{Limit: "rolconnlimit", Scope: "role " + role,
			Raise: "ALTER ROLE " + quoteIdent(role) + " CONNECTION LIMIT <n>", Err: pgErr}
	case strings.HasPrefix(msg, "too many connections for database "):
		db := quoted(msg)
		return &dialects.ConnLimitError{Limit: "datconnlimit", Scope: "database " + db,
			Raise: "ALTER DATABASE " + quoteIdent(db) + " CONNECTION LIMIT <n>", Err: pgErr}
	default:
		return &dialects.ConnLimitError{Limit: "max_connections", Scope: "server",
			Raise: "ALTER SYSTEM SET max_connections = <n>", Restart: true, Err: pgErr}
	}
}

// ClassifyError implements dialects.ErrorClassifier for the lease table.
func (Builder) ClassifyError(err error) error { return ClassifyError(err) }

// ClassifyError implements dialects.ErrorClassifier for session locks.
func (SessionOps) ClassifyError(err error) error { return ClassifyError(err) }

// quoted is the text between the first and the last double quote of msg,
// or "" when there is none.
func quoted(msg string) string {
	i, j := strings.IndexByte(msg, '"'), strings.LastIndexByte(msg, '"')
	if i < 0 || j <= i {
		return ""
	}
	return msg[i+1 : j]
}

// quoteIdent quotes name as a PostgreSQL identifier.
func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}
