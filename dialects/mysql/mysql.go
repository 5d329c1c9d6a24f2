// Package mysql is schedlock's dialect for the MySQL wire family: MySQL
// (5.7 and 8.x, Aurora MySQL, Percona Server), MariaDB (10.x, 11.x) and TiDB.
// Importing it registers the dialect "mysql" (dburl scheme "mysql", driver
// github.com/go-sql-driver/mysql).
//
// Strategies:
//
//   - session: GET_LOCK on a pinned connection, freed when the connection
//     drops. Recommended on MySQL >= 5.7.5 and MariaDB >= 10.0.2; refused on
//     older servers, where a second GET_LOCK silently released the first, and
//     on TiDB, whose GET_LOCK waits at least one second and cannot name the
//     holder. Lock names go through LockName: scoped to the DSN's database
//     ("jobs/nightly"; GET_LOCK names are server-wide) and at most 64
//     characters and 192 bytes. The holder is the connection id from IS_USED_LOCK, and KILL of
//     that id frees the lock.
//   - table: the lease table of package locktable. Times are DATETIME(3)
//     (ShedLock's table: TIMESTAMP(3)) holding UTC wall-clock time from
//     UTC_TIMESTAMP(3). Statement outcomes are read from the insert id that
//     LAST_INSERT_ID(expr) sets, which does not depend on the connection's
//     CLIENT_FOUND_ROWS flag; see Builder.
//
// ShedLock's TIMESTAMP columns are converted through the session time zone
// on the way in and out, so every client of such a table must use the same
// session time zone (normally the server's default), as ShedLock itself
// requires.
//
// With the driver's defaults each statement that takes parameters is a
// server-side prepare, execute and close; interpolateParams=true in the DSN
// sends one text statement instead, which roughly doubles session-lock
// throughput. The lease-table engine prepares its statements once.
package mysql

import (
	"context"
	"database/sql"

	// The database/sql driver "mysql".
	_ "github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// Name is the dialect's registry name and its dburl scheme.
const Name = "mysql"

// DriverName is the database/sql driver name of go-sql-driver/mysql.
const DriverName = "mysql"

func init() {
	dialects.Register(&dialects.Dialect{
		Name:              Name,
		Title:             "MySQL",
		Support:           supportRows,
		Schemes:           []dialects.Scheme{{Name: "mysql", DefaultPort: "3306"}, {Name: "tidb", DefaultPort: "4000"}},
		Forms:             "mysql://, mariadb://",
		Starts:            []string{"mysql://", "mariadb://", "tidb://"},
		Products:          map[string]string{dialects.ProductMySQL: "MySQL", dialects.ProductMariaDB: "MariaDB", dialects.ProductTiDB: "TiDB"},
		DriverQuery:       DriverParams,
		ConnString:        ConnString,
		NameConnections:   NameConnections,
		ConnectHint:       ConnectHint,
		CheckSessionNames: CheckSessionNames,
		Open:              Open,
	})
}

// Backend is an opened MySQL, MariaDB or TiDB database: the kit's DB,
// GET_LOCK session locks, their administration, the lease table and the
// probe. Its fields are what detection proved beyond Info.
type Backend struct {
	*sqlkit.DB
	// Database is DATABASE() of the DSN's connections: the scope of
	// LockName. Empty when the DSN names no database.
	Database string
}

var (
	_ dialects.Backend     = (*Backend)(nil)
	_ sqlkit.SessionEngine = (*Backend)(nil)
	_ sqlkit.AdminEngine   = (*Backend)(nil)
	_ sqlkit.ProbeEngine   = (*Backend)(nil)
)

// Open opens the database of t (the Dialect's Open): the pool of
// DriverName, its ping's error classified by ClassifyError, then New.
func Open(ctx context.Context, t dialects.Target) (dialects.Backend, error) {
	return sqlkit.Open(ctx, t, DriverName, ClassifyError, New)
}

// New detects the server behind pool (Detect) and returns its backend,
// which owns pool. options are the DSN's x- options (nil for none).
func New(ctx context.Context, pool *sql.DB, options map[string]string) (*Backend, error) {
	table := sqlkit.OptionsTable(options)
	info, database, exists, seen, err := DetectTable(ctx, pool, table)
	if err != nil {
		return nil, dialects.Wrap(Name, "detect", err)
	}
	b := &Backend{Database: database}
	b.DB = sqlkit.New(pool, info, options, b)
	if seen {
		b.SawTable(table, exists)
	}
	return b, nil
}

// SessionOps returns the GET_LOCK statements of this server, naming
// locks as n asks.
func (b *Backend) SessionOps(n dialects.SessionNames) *SessionOps {
	return &SessionOps{Info: b.Info, Database: b.Database, Names: n}
}

// NewSessionLocker implements sqlkit.SessionEngine (see the function
// NewSessionLocker).
func (b *Backend) NewSessionLocker(n dialects.SessionNames) (dialects.Locker, error) {
	return NewSessionLocker(b.SQL, b.SessionOps(n))
}

// NewLockAdmin implements sqlkit.AdminEngine: the LockAdmin on the pool,
// naming session locks as n asks.
func (b *Backend) NewLockAdmin(n dialects.SessionNames) dialects.LockAdmin {
	return &LockAdmin{DB: b.SQL, Info: b.Info, Database: b.Database, Names: n}
}

// NewTableLocker implements sqlkit.Engine (see the function
// NewTableLocker).
func (b *Backend) NewTableLocker(t dialects.Table) (dialects.TableLocker, error) {
	return NewTableLocker(b.SQL, b.Info, t)
}

// RecommendStrategy implements sqlkit.Engine (see Recommend).
func (b *Backend) RecommendStrategy() (dialects.Strategy, string) { return Recommend(b.Info) }

// ProbeDialect implements sqlkit.ProbeEngine (see Probe).
func (b *Backend) ProbeDialect(ctx context.Context, opts dialects.ProbeOptions) (dialects.Capabilities, error) {
	return Probe(ctx, b.SQL, b.Info, opts)
}

// Recommend picks the session strategy (GET_LOCK) where the server keeps
// several named locks per session, and the lease table elsewhere.
func Recommend(info dialects.Info) (dialects.Strategy, string) {
	if err := sessionSupport(info); err != nil {
		return dialects.StrategyTable, sessionRefusal(info) + "; " + dialects.UseTableStrategy.String()
	}
	why := "GET_LOCK on a dedicated connection: no table to create, and the lock is freed as soon as its connection drops"
	if info.Variant == VariantAurora {
		why += auroraNote
	}
	return dialects.StrategySession, why
}
