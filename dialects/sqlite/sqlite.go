// Package sqlite is schedlock's SQLite dialect, on the pure-Go driver
// modernc.org/sqlite (database/sql driver name "sqlite"). Importing it
// registers the dialect.
//
// SQLite has no named session locks, so only the table strategy exists:
// a lease table whose every statement takes SQLite's database write lock,
// which makes each acquire, refresh and release atomic. Several processes
// may share one database file; open it with DSN so that concurrent writers
// wait for each other instead of failing with SQLITE_BUSY.
package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// Name is the dialect's registry name.
const Name = "sqlite"

// DriverName is the database/sql driver name of modernc.org/sqlite.
const DriverName = "sqlite"

func init() {
	dialects.Register(&dialects.Dialect{
		Name:     Name,
		Title:    "SQLite",
		Schemes:  []dialects.Scheme{{Name: "sqlite3"}, {Name: "sqlite"}, {Name: "moderncsqlite"}, {Name: "file"}},
		Forms:    "sqlite:PATH (or a bare *.db path)",
		Starts:   []string{"sqlite:"},
		Products: map[string]string{dialects.ProductSQLite: "SQLite"},
		Files: &dialects.FileDatabase{
			Extensions: []string{".db", ".sqlite", ".sqlite3", ".db3"},
			Hint:       "is the file a SQLite database, and is its directory writable?",
			Conn:       DSN,
		},
		Driver:           DriverName,
		Detect:           Detect,
		NewSessionLocker: nil, // SQLite has no named session locks
		NewTableLocker: func(db *sql.DB, _ dialects.Info, t dialects.Table) (dialects.TableLocker, error) {
			return NewTableLocker(db, t)
		},
		Recommend: Recommend,
		Probe:     Probe,
	})
}

// Detect identifies SQLite with SELECT sqlite_version().
func Detect(ctx context.Context, db *sql.DB) (dialects.Info, error) {
	var version string
	if err := db.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&version); err != nil {
		return dialects.Info{}, fmt.Errorf("read sqlite_version(): %w", err)
	}
	return dialects.Info{Dialect: Name, Product: dialects.ProductSQLite, Version: version, Banner: version}, nil
}

// NewTableLocker returns the lease-table locker for t on db.
func NewTableLocker(db *sql.DB, t dialects.Table) (*locktable.Locker, error) {
	return locktable.New(db, Builder{}, t)
}

// Recommend always picks the table strategy: SQLite has no session locks.
func Recommend(dialects.Info) (dialects.Strategy, string) {
	return dialects.StrategyTable, "SQLite has no named session locks; the lease table is atomic under SQLite's database write lock"
}
