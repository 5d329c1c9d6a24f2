// Package postgres is schedlock's dialect for the PostgreSQL wire family:
// PostgreSQL itself (including Amazon Aurora), CockroachDB, YugabyteDB,
// KingbaseES and openGauss. It registers itself as "postgres" (dburl schemes
// postgres and pgx) and opens databases with the pgx driver
// (github.com/jackc/pgx/v5/stdlib, database/sql name "pgx").
//
// Session locks are PostgreSQL advisory locks keyed by Key(name); the table
// strategy is the lease table of package locktable with the SQL of Builder.
// Open (or New, on a pool the caller opened) returns the *Backend.
package postgres

import (
	"github.com/schedlock/schedlock/dialects"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
)

// Name is the dialect's registry name.
const Name = "postgres"

// DriverName is the database/sql driver this dialect opens with.
const DriverName = "pgx"

func init() {
	dialects.Register(&dialects.Dialect{
		Name:              Name,
		Title:             "PostgreSQL",
		Support:           supportRows,
		Schemes:           Schemes,
		Forms:             "postgres://, postgresql://, pgx://, kingbase://",
		Starts:            []string{"postgres://", "postgresql://", "kingbase://"},
		Products:          ProductTitles,
		ConnString:        ConnString,
		CheckConn:         CheckConn,
		Where:             Where,
		NameConnections:   NameConnections,
		ConnectHint:       ConnectHint,
		CheckSessionNames: CheckSessionNames,
		Open:              Open,
	})
}
