package postgres

import (
	"database/sql"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// once returns args for a statement that runs once on a connection
// (detection, the session guard): on pgx's driver they ask for one round
// trip without preparing the statement (pgx.QueryExecModeExec), where
// pgx's default would prepare and cache it first, a round trip of its
// own; on another driver they are args as they are.
func once(db *sql.DB, args ...any) []any {
	if _, ok := db.Driver().(*stdlib.Driver); !ok {
		return args
	}
	return append([]any{pgx.QueryExecModeExec}, args...)
}

// onceOn is once for a statement on conn.
func onceOn(conn *sql.Conn, args ...any) []any {
	pgxConn := false
	_ = conn.Raw(func(dc any) error {
		_, pgxConn = dc.(*stdlib.Conn)
		return nil
	})
	if !pgxConn {
		return args
	}
	return append([]any{pgx.QueryExecModeExec}, args...)
}
