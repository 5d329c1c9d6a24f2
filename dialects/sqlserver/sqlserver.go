// Package sqlserver is schedlock's dialect for Microsoft SQL Server
// (2012–2022, including Linux and containers) and Azure SQL (Database and
// Managed Instance). Importing it registers the dialect "sqlserver" (dburl
// scheme sqlserver, alias mssql) with the driver
// github.com/microsoft/go-mssqldb (database/sql name "sqlserver").
//
// Strategies:
//
//   - session: sp_getapplock with @LockOwner = 'Session' and
//     @LockTimeout = 0 on a pinned connection, its return code read and
//     mapped (0 and 1 granted, -1 held by another session, -2, -3 and -999
//     an *AppLockError). Released with sp_releaseapplock only when
//     APPLOCK_MODE shows this session holds it; freed by the server when
//     the connection ends. Resources are LockName(name): at most 32
//     characters, so sys.dm_tran_locks shows every one in full. The holder
//     is request_session_id in sys.dm_tran_locks; KILL ends it. A waiting
//     acquire (Options.Wait) waits on the server: sp_getapplock with
//     @LockTimeout in milliseconds, granted the moment the holder
//     releases, cancelled by the context (an attention). The statements
//     are prepared once per lock connection; each is one round trip.
//   - table: the lease table of package locktable with Builder's SQL:
//     MERGE … WITH (HOLDLOCK) … OUTPUT to acquire, UPDATE … OUTPUT to
//     refresh, release and expire, all on SYSUTCDATETIME(); names are
//     stored as FitName(name, column length) and duplicate keys (2627,
//     2601) mean "held" (Builder.IsDuplicateKey, read by the engine).
//
// Lock administration (LockAdmin) finds the lock tables in sys.tables,
// lists application locks from sys.dm_tran_locks and ends holders with
// KILL; Liquibase's DATABASECHANGELOGLOCK is read and released with
// Builder's SQL (LiquibaseInspect, LiquibaseRelease).
//
// Detection reads @@VERSION, SERVERPROPERTY('EngineEdition'),
// 'ProductVersion' and 'Edition', and the database's
// READ_COMMITTED_SNAPSHOT flag (Info.Mode).
//
// Nothing here was run against a live server in this repository: the SQL
// is pinned by golden files and the behaviour proven against a simulator
// that answers with SQL Server's return codes and error numbers. The live
// suite runs when SCHEDLOCK_TEST_SQLSERVER_DSN is set.
package sqlserver

import (
	// The database/sql driver "sqlserver".
	_ "github.com/microsoft/go-mssqldb"

	"github.com/schedlock/schedlock/dialects"
)

// Name is the dialect's registry name, its dburl scheme and its
// database/sql driver name.
const Name = "sqlserver"

// Product is Info.Product for SQL Server and Azure SQL.
const Product = "sqlserver"

func init() {
	dialects.Register(&dialects.Dialect{
		Name:             Name,
		Title:            "SQL Server",
		Support:          supportRows,
		Schemes:          []dialects.Scheme{{Name: "sqlserver", DefaultPort: "1433"}},
		Forms:            "sqlserver://",
		Starts:           []string{"sqlserver://"},
		Driver:           "sqlserver",
		NameConnections:  NameConnections,
		Detect:           Detect,
		NewSessionLocker: NewSessionLocker,
		NewTableLocker:   NewTableLocker,
		Recommend:        Recommend,
		NewLockAdmin:     NewLockAdmin,
		Probe:            Probe,
	})
}

// Recommend picks the session strategy (sp_getapplock) on every SQL Server
// and Azure SQL Database or Managed Instance, and says when the database
// runs READ_COMMITTED_SNAPSHOT, which matters to READPAST claim queries.
func Recommend(info dialects.Info) (dialects.Strategy, string) {
	if isSynapse(info) {
		return dialects.StrategyTable, synapseRefusal
	}
	why := "sp_getapplock owned by the session on a dedicated connection: no table to create, the lock is freed as soon as its connection drops, and sys.dm_tran_locks shows its holder"
	if ReadCommittedSnapshot(info) {
		why += "; this database has READ_COMMITTED_SNAPSHOT ON, which leaves both lock strategies unaffected but makes READPAST claim queries need the READCOMMITTEDLOCK hint"
	}
	return dialects.StrategySession, why
}
