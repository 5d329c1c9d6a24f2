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
	// The database/sql driver "oracle".
	_ "github.com/sijms/go-ora/v2"

	"github.com/schedlock/schedlock/dialects"
)

// Name is the dialect's registry name, its dburl scheme and its
// database/sql driver name.
const Name = "oracle"

// Product is the Info.Product of every Oracle Database.
const Product = "oracle"

func init() {
	dialects.Register(&dialects.Dialect{
		Name:             Name,
		Title:            "Oracle",
		Support:          supportRows,
		Schemes:          []dialects.Scheme{{Name: "oracle", DefaultPort: "1521"}},
		Forms:            "oracle://",
		Starts:           []string{"oracle://"},
		Driver:           "oracle",
		NameConnections:  NameConnections,
		Detect:           Detect,
		NewSessionLocker: NewSessionLocker,
		NewTableLocker:   NewTableLocker,
		Recommend:        Recommend,
		NewLockAdmin:     NewLockAdmin,
		Probe:            Probe,
	})
}

// Recommend picks the session strategy (DBMS_LOCK) when detection proved
// that the user may execute SYS.DBMS_LOCK, and the lease table otherwise,
// saying which grant would enable session locks.
//
// The answer is the privilege probe Detect recorded in info.Facts for this
// database and user.
func Recommend(info dialects.Info) (dialects.Strategy, string) {
	access, ok := accessOf(info)
	switch {
	case ok && access.granted:
		return dialects.StrategySession, "DBMS_LOCK (EXECUTE on SYS.DBMS_LOCK is granted): a server lock on a dedicated connection, freed as soon as its session ends, so a crashed node leaves no zombie lock"
	case ok && access.known:
		return dialects.StrategyTable, "this user lacks EXECUTE on SYS.DBMS_LOCK, so there are no session locks; the lease table needs no extra privilege (" +
			grantExecute(access.user) + " enables the session strategy)"
	default:
		return dialects.StrategyTable, "EXECUTE on SYS.DBMS_LOCK was not proven by detection; the lease table needs no extra privilege"
	}
}
