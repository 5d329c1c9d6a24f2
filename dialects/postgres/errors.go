package postgres

import (
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
)

// SQLSTATE codes this package reacts to.
const (
	codeUndefinedTable        = "42P01"
	codeInsufficientPrivilege = "42501"
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
