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
// Open connects and detects; New detects a pool the caller opened. Both
// return a *Backend. Detection reads @@VERSION,
// SERVERPROPERTY('EngineEdition'), 'ProductVersion' and 'Edition', and the
// database's READ_COMMITTED_SNAPSHOT flag (Backend.RCSI, shown as
// Info.Mode).
//
// Nothing here was run against a live server in this repository: the SQL
// is pinned by golden files and the behaviour proven against a simulator
// that answers with SQL Server's return codes and error numbers. The live
// suite runs when SCHEDLOCK_TEST_SQLSERVER_DSN is set.
package sqlserver

import (
	"context"
	"database/sql"
	"fmt"

	// The database/sql driver "sqlserver".
	_ "github.com/microsoft/go-mssqldb"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// Name is the dialect's registry name and its dburl scheme.
const Name = "sqlserver"

// DriverName is go-mssqldb's database/sql driver name.
const DriverName = "sqlserver"

// Product is Info.Product for SQL Server and Azure SQL.
const Product = "sqlserver"

func init() {
	dialects.Register(&dialects.Dialect{
		Name:            Name,
		Title:           "SQL Server",
		Support:         supportRows,
		Schemes:         []dialects.Scheme{{Name: "sqlserver", DefaultPort: "1433"}},
		Forms:           "sqlserver://",
		Starts:          []string{"sqlserver://"},
		NameConnections: NameConnections,
		Open:            Open,
	})
}

// Backend is an opened SQL Server or Azure SQL database: the kit's DB and
// what detection proved beyond Info. It is the kit's Engine with session
// locks (sp_getapplock), their administration and a probe of its own.
type Backend struct {
	*sqlkit.DB
	// RCSI is true when the current database runs READ_COMMITTED_SNAPSHOT
	// (Info.Mode is ModeReadCommittedSnapshot): READPAST claim and probe
	// queries then add the READCOMMITTEDLOCK hint. The lock strategies
	// are not affected.
	RCSI bool
}

var (
	_ dialects.Backend     = (*Backend)(nil)
	_ sqlkit.SessionEngine = (*Backend)(nil)
	_ sqlkit.AdminEngine   = (*Backend)(nil)
	_ sqlkit.ProbeEngine   = (*Backend)(nil)
)

// Open opens the SQL Server database of t (the Dialect's Open): it
// connects with go-mssqldb and detects the server (see New).
func Open(ctx context.Context, t dialects.Target) (dialects.Backend, error) {
	return sqlkit.Open(ctx, t, DriverName, nil, New)
}

// New detects the server behind pool with one query (ReadServer) and
// returns its backend, which owns pool. options are the DSN's x- options
// (nil for none).
func New(ctx context.Context, pool *sql.DB, options map[string]string) (*Backend, error) {
	s, err := ReadServer(ctx, pool)
	if err != nil {
		return nil, err
	}
	return newBackend(pool, s, options), nil
}

// newBackend is the backend of pool for what detection read.
func newBackend(pool *sql.DB, s Server, options map[string]string) *Backend {
	b := &Backend{RCSI: s.ReadCommittedSnapshot}
	b.DB = sqlkit.New(pool, ParseServer(s), options, b)
	return b
}

// NewTableLocker implements sqlkit.Engine: the lease-table locker for t,
// with Builder's SQL. It sends nothing; a missing table shows up on first
// use. It refuses Azure Synapse, which has no OUTPUT clause, with an error
// matching dialects.ErrUnsupported.
func (b *Backend) NewTableLocker(t dialects.Table) (dialects.TableLocker, error) {
	if isSynapse(b.Info) {
		return nil, dialects.Wrap(Name, "table locker", fmt.Errorf("%w: %s", dialects.ErrUnsupported, synapseRefusal))
	}
	l, err := locktable.New(b.SQL, Builder{}, t)
	if err != nil {
		return nil, dialects.Wrap(Name, "table locker", err)
	}
	return l, nil
}

// NewSessionLocker implements sqlkit.SessionEngine: the sp_getapplock
// locker. SQL Server names its locks one way (LockName), so n changes
// nothing. It refuses Azure Synapse, which has no sp_getapplock, with an
// error matching dialects.ErrUnsupported.
func (b *Backend) NewSessionLocker(dialects.SessionNames) (dialects.Locker, error) {
	if isSynapse(b.Info) {
		return nil, fmt.Errorf("%w: %s", dialects.ErrUnsupported, synapseRefusal)
	}
	return &sqlkit.SessionLocker{Dialect: Name, DB: b.SQL, Ops: &SessionOps{Info: b.Info}}, nil
}

// NewLockAdmin implements sqlkit.AdminEngine: lock-table discovery in the
// caller's default schema (and dbo), application locks from
// sys.dm_tran_locks, and KILL. SQL Server names its locks one way
// (LockName), so n changes nothing.
func (b *Backend) NewLockAdmin(dialects.SessionNames) dialects.LockAdmin {
	return &LockAdmin{db: b.SQL, info: b.Info, ops: &SessionOps{Info: b.Info}}
}

// RecommendStrategy implements sqlkit.Engine: the session strategy
// (sp_getapplock) on every SQL Server and Azure SQL Database or Managed
// Instance, saying when the database runs READ_COMMITTED_SNAPSHOT, which
// matters to READPAST claim queries; the table strategy's refusal on
// Azure Synapse, which has neither.
func (b *Backend) RecommendStrategy() (dialects.Strategy, string) {
	if isSynapse(b.Info) {
		return dialects.StrategyTable, synapseRefusal
	}
	why := "sp_getapplock owned by the session on a dedicated connection: no table to create, the lock is freed as soon as its connection drops, and sys.dm_tran_locks shows its holder"
	if b.RCSI {
		why += "; this database has READ_COMMITTED_SNAPSHOT ON, which leaves both lock strategies unaffected but makes READPAST claim queries need the READCOMMITTEDLOCK hint"
	}
	return dialects.StrategySession, why
}
