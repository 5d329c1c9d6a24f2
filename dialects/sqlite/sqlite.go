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
	"github.com/schedlock/schedlock/dialects/sqlkit"

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
		Support:  supportRows,
		Schemes:  []dialects.Scheme{{Name: "sqlite3"}, {Name: "sqlite"}, {Name: "moderncsqlite"}, {Name: "file"}},
		Forms:    "sqlite:PATH (or a bare *.db path)",
		Starts:   []string{"sqlite:"},
		Products: map[string]string{dialects.ProductSQLite: "SQLite"},
		Files: &dialects.FileDatabase{
			Extensions: []string{".db", ".sqlite", ".sqlite3", ".db3"},
			Hint:       "is the file a SQLite database, and is its directory writable?",
			Conn:       DSN,
		},
		Open: Open,
	})
}

// Backend is an opened SQLite database: the kit's DB and the lease table.
// SQLite has no named session locks, so it implements neither
// sqlkit.SessionEngine nor sqlkit.AdminEngine.
type Backend struct {
	*sqlkit.DB
}

var (
	_ dialects.Backend   = (*Backend)(nil)
	_ sqlkit.ProbeEngine = (*Backend)(nil)
)

// Open opens the SQLite database of t (the Dialect's Open).
func Open(ctx context.Context, t dialects.Target) (dialects.Backend, error) {
	return sqlkit.Open(ctx, t, DriverName, nil, New)
}

// New detects the SQLite database behind pool and returns its backend,
// which owns pool. options are the DSN's x- options (nil for none).
func New(ctx context.Context, pool *sql.DB, options map[string]string) (*Backend, error) {
	info, err := Detect(ctx, pool)
	if err != nil {
		return nil, dialects.Wrap(Name, "detect", err)
	}
	b := &Backend{}
	b.DB = sqlkit.New(pool, info, options, b)
	return b, nil
}

// NewTableLocker implements sqlkit.Engine.
func (b *Backend) NewTableLocker(t dialects.Table) (dialects.TableLocker, error) {
	return NewTableLocker(b.SQL, t)
}

// RecommendStrategy implements sqlkit.Engine: always the table strategy.
func (b *Backend) RecommendStrategy() (dialects.Strategy, string) { return Recommend() }

// ProbeDialect implements sqlkit.ProbeEngine (see Probe).
func (b *Backend) ProbeDialect(ctx context.Context, opts dialects.ProbeOptions) (dialects.Capabilities, error) {
	return Probe(ctx, b.SQL, opts)
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
func Recommend() (dialects.Strategy, string) {
	return dialects.StrategyTable, "SQLite has no named session locks; the lease table is atomic under SQLite's database write lock"
}
