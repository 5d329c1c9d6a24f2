package oralike

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/schedlock/schedlock/dialects"
)

// Privileges is what the capability probe read of the session's
// privileges: the session user, whether it may end other sessions
// (Oracle: ALTER SYSTEM; Dameng: the DBA role) and whether it may create
// tables.
type Privileges struct {
	User        string
	Kill        bool
	CreateTable bool
	// Err is why the privileges could not be read; the other fields are
	// then zero.
	Err error
}

// ReadPrivileges runs query, which selects one row of the session user, a
// count of the privilege that ends other sessions and a count of CREATE
// TABLE (or CREATE ANY TABLE). A failure is kept in Err as "read <views>:
// <error>".
func ReadPrivileges(ctx context.Context, db *sql.DB, query, views string) Privileges {
	var user sql.NullString
	var kill, create int64
	if err := db.QueryRowContext(ctx, query).Scan(&user, &kill, &create); err != nil {
		return Privileges{Err: fmt.Errorf("read %s: %w", views, err)}
	}
	return Privileges{User: user.String, Kill: kill > 0, CreateTable: create > 0}
}

// MissingCreateTable is the missing CREATE TABLE that keeps the table
// strategy from creating its table, its GRANT naming the user and followed
// by note (such as a tablespace quota); nil when the session has it or its
// privileges could not be read.
func (p Privileges) MissingCreateTable(note string) *dialects.MissingPrivilege {
	if p.Err != nil || p.CreateTable {
		return nil
	}
	return &dialects.MissingPrivilege{
		Privilege: "CREATE TABLE",
		NeededFor: "the table strategy creating its lock table (or have it created in advance by a user that may), and the SKIP LOCKED probe",
		Grant:     "GRANT CREATE TABLE TO " + QuoteUser(p.User) + note,
	}
}
