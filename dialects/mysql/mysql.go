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
	// The database/sql driver "mysql".
	_ "github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/dialects"
)

// Name is the dialect's registry name, its dburl scheme and its
// database/sql driver name.
const Name = "mysql"

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
		ClassifyError:     ClassifyError,
		Driver:            "mysql",
		Detect:            Detect,
		NewSessionLocker:  NewSessionLocker,
		CheckSessionNames: CheckSessionNames,
		NewTableLocker:    NewTableLocker,
		Recommend:         Recommend,
		NewLockAdmin:      NewLockAdmin,
		Probe:             Probe,
	})
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
