// Package oracle is schedlock's dialect for Oracle Database 11g to 23ai/26ai
// (on premises, Express/Free editions and Autonomous Database). Importing it
// registers the dialect "oracle" (dburl scheme "oracle", database/sql driver
// "oracle" of github.com/sijms/go-ora/v2, a pure-Go client).
//
// Strategies:
//
//   - session: DBMS_LOCK on a pinned connection. Each statement is one
//     anonymous PL/SQL block that calls DBMS_LOCK.ALLOCATE_UNIQUE (name to
//     lock handle) and then REQUEST (exclusive mode, timeout 0,
//     release_on_commit => FALSE) or RELEASE. ALLOCATE_UNIQUE commits; it
//     runs only on the lock's dedicated connection, which never carries a
//     transaction of the caller, so that commit has nothing to commit. The
//     lock is freed when its session ends. Needs EXECUTE ON SYS.DBMS_LOCK;
//     without it the session strategy is refused with the GRANT that fixes
//     it. Names go through LockName ("SCHEDLOCK$" + name, at most 128
//     bytes). A waiting acquire (Options.Wait) waits on the server: REQUEST
//     with a timeout in whole seconds (the wait rounded up), granted the
//     moment the holder releases, cancelled by the context (a break). The
//     blocks are prepared once per lock connection, so each operation is
//     one round trip. See SessionOps.
//   - table: the lease table of package locktable, written with MERGE (see
//     Builder). Times are TIMESTAMP(3) holding UTC from
//     SYS_EXTRACT_UTC(SYSTIMESTAMP). An ORA-00001 from two first inserts
//     racing is the other node winning: "held", not an error
//     (Builder.IsDuplicateKey).
//
// Lock administration (LockAdmin, for locks ls and unlock) finds the lock
// tables in ALL_TABLES and ALL_SYNONYMS, lists DBMS_LOCK locks from
// GV$LOCK type 'UL' joined to SYS.DBMS_LOCK_ALLOCATED and GV$SESSION, and
// ends a holder with ALTER SYSTEM KILL SESSION; Liquibase's
// DATABASECHANGELOGLOCK is read and released with Builder's SQL. Probe
// proves DBMS_LOCK, SKIP LOCKED and NOWAIT, the lock views and the
// privileges to kill and to create tables.
//
// Every statement here was verified against golden SQL and a simulator of
// the server's return codes, error numbers and row shapes, not against a
// live Oracle server; set SCHEDLOCK_TEST_ORACLE_DSN to run the live suite.
package oracle

import (
	"context"
	"database/sql"

	// The database/sql driver "oracle".
	_ "github.com/sijms/go-ora/v2"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// Name is the dialect's registry name, its dburl scheme and its
// database/sql driver name.
const Name = "oracle"

// DriverName is the database/sql driver name of go-ora.
const DriverName = "oracle"

// Product is the Info.Product of every Oracle Database.
const Product = "oracle"

func init() {
	dialects.Register(&dialects.Dialect{
		Name:            Name,
		Title:           "Oracle",
		Support:         supportRows,
		Schemes:         []dialects.Scheme{{Name: "oracle", DefaultPort: "1521"}},
		Forms:           "oracle://",
		Starts:          []string{"oracle://"},
		NameConnections: NameConnections,
		Open:            Open,
	})
}

// Backend is an opened Oracle Database: the kit's DB, DBMS_LOCK session
// locks, their administration, the lease table and the probe. Its fields
// are what detection proved beyond Info.
type Backend struct {
	*sqlkit.DB
	// access is whether the user may execute SYS.DBMS_LOCK, as New's
	// probe answered.
	access lockAccess
}

var (
	_ dialects.Backend     = (*Backend)(nil)
	_ sqlkit.SessionEngine = (*Backend)(nil)
	_ sqlkit.AdminEngine   = (*Backend)(nil)
	_ sqlkit.ProbeEngine   = (*Backend)(nil)
)

// Open opens the database of t (the Dialect's Open): the pool of
// DriverName, then New.
func Open(ctx context.Context, t dialects.Target) (dialects.Backend, error) {
	return sqlkit.Open(ctx, t, DriverName, nil, New)
}

// New identifies the server behind pool (Detect), probes without locking
// or committing anything whether the user may execute SYS.DBMS_LOCK (the
// session locker and the recommendation use that answer), and returns its
// backend, which owns pool. options are the DSN's x- options (nil for
// none).
func New(ctx context.Context, pool *sql.DB, options map[string]string) (*Backend, error) {
	info, user, err := identify(ctx, pool)
	if err != nil {
		return nil, dialects.Wrap(Name, "detect", err)
	}
	access, err := probeDBMSLock(ctx, pool, user)
	if err != nil {
		return nil, dialects.Wrap(Name, "detect", err)
	}
	b := &Backend{access: access}
	b.DB = sqlkit.New(pool, info, options, b)
	return b, nil
}

// NewSessionLocker implements sqlkit.SessionEngine: the DBMS_LOCK locker.
// When New proved that the user may not execute SYS.DBMS_LOCK it refuses
// with a *dialects.PrivilegeError carrying the GRANT that fixes it (or use
// the table strategy). When the probe gave no answer the locker is
// returned and its first statement reports a missing grant the same way.
// Oracle's lock names take no options, so n is not read.
func (b *Backend) NewSessionLocker(dialects.SessionNames) (dialects.Locker, error) {
	return newSessionLocker(b.SQL, b.access)
}

// NewLockAdmin implements sqlkit.AdminEngine: the LockAdmin on the pool.
func (b *Backend) NewLockAdmin(dialects.SessionNames) dialects.LockAdmin {
	return &LockAdmin{DB: b.SQL, Info: b.Info, Ops: &SessionOps{}}
}

// NewTableLocker implements sqlkit.Engine (see the function
// NewTableLocker).
func (b *Backend) NewTableLocker(t dialects.Table) (dialects.TableLocker, error) {
	return NewTableLocker(b.SQL, b.Info, t)
}

// RecommendStrategy implements sqlkit.Engine: the session strategy
// (DBMS_LOCK) when New proved that the user may execute SYS.DBMS_LOCK, and
// the lease table otherwise, saying which grant would enable session
// locks.
func (b *Backend) RecommendStrategy() (dialects.Strategy, string) { return recommend(b.access) }

// ProbeDialect implements sqlkit.ProbeEngine (see Probe).
func (b *Backend) ProbeDialect(ctx context.Context, opts dialects.ProbeOptions) (dialects.Capabilities, error) {
	return Probe(ctx, b.SQL, b.Info, opts)
}
