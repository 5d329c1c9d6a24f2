// Package dameng is schedlock's dialect for Dameng DM8 (达梦). Importing it
// registers the dialect "dameng" for the dburl scheme dm:// (alias
// dameng://), opened with the database/sql driver "dm".
//
// # The driver
//
// The Go driver, gitee.com/chunanyong/dm (a mirror of Dameng's official
// dm-go-driver), is not part of the default build. Build with it:
//
//	go get gitee.com/chunanyong/dm@v1.8.13   # the release matching your server
//	go build -tags dameng ./...
//
// Only driver_dameng.go imports it, behind the dameng build tag; everything
// else here is plain database/sql. Without the tag no driver "dm" is
// registered and opening a dm:// DSN fails (DriverLinked is false and
// DriverHint says how to rebuild).
//
// # Strategies
//
//   - table (recommended): the lease table of package locktable, written
//     with MERGE INTO … USING (SELECT … FROM DUAL) (see Builder). Times are
//     TIMESTAMP(3) holding UTC from SYS_EXTRACT_UTC(SYSTIMESTAMP). A
//     duplicate key from two first inserts racing (-6602 and its siblings)
//     is the other session winning: "held", never an error.
//   - session: the DBMS_LOCK system package, used only when detection
//     proved it is installed (SYS.DBMS_LOCK in ALL_OBJECTS); otherwise the
//     session strategy is refused with the call that installs it,
//     CALL SP_CREATE_SYSTEM_PACKAGES(1, 'DBMS_LOCK'). Each statement is one
//     anonymous block calling ALLOCATE_UNIQUE and REQUEST (mode 6,
//     timeout 0, release_on_commit FALSE) or RELEASE, on a pinned
//     connection. A waiting acquire (Options.Wait) waits on the server:
//     REQUEST with a timeout in whole seconds (the wait rounded up),
//     granted the moment the holder releases, cancelled by the context.
//     The blocks are prepared once per lock connection.
//
// Listing (ListSessionLocks) reads V$LOCK joined to SYS.DBMS_LOCK_ALLOCATED
// and V$SESSIONS; Kill runs SP_CLOSE_SESSION.
//
// Every statement here was verified against golden SQL and a simulator of
// the server's error codes and row shapes, not against a live DM8 server;
// the facts marked [U] in docs/dialects/dameng.md are unverified. Set
// SCHEDLOCK_TEST_DAMENG_DSN (and build the tests with -tags dameng) to run
// the live suite.
package dameng

import "github.com/schedlock/schedlock/dialects"

// Name is the dialect's registry name.
const Name = "dameng"

// Driver is the database/sql driver name gitee.com/chunanyong/dm registers.
const Driver = "dm"

// Product is the Info.Product of every Dameng server.
const Product = "dameng"

func init() {
	dialects.Register(&dialects.Dialect{
		Name:              Name,
		Title:             "Dameng",
		Support:           supportRows,
		Schemes:           []dialects.Scheme{{Name: "dm", DefaultPort: "5236", URL: urlScheme}},
		Forms:             "dm://",
		Starts:            []string{"dm://"},
		MissingDriverHint: "rebuild with -tags dameng after `go get gitee.com/chunanyong/dm` (see docs/dialects/dameng.md)",
		Driver:            Driver,
		Detect:            Detect,
		NewSessionLocker:  NewSessionLocker,
		NewTableLocker:    NewTableLocker,
		Recommend:         Recommend,
		NewLockAdmin:      NewLockAdmin,
		Probe:             Probe,
	})
}

// Recommend picks the lease table unless detection proved that DBMS_LOCK
// is installed. Even then the table stays the recommendation when DM's
// DBMS_LOCK semantics have not been proven on this server: the session
// strategy is recommended only with the package present, and DB.Probe
// still downgrades it to the table when the two-connection probe fails.
//
// The answer is the DBMS_LOCK probe Detect recorded in info.Facts.
func Recommend(info dialects.Info) (dialects.Strategy, string) {
	access, ok := accessOf(info)
	switch {
	case ok && access.present:
		return dialects.StrategySession, "the DBMS_LOCK system package is installed: a server lock on a dedicated connection, freed as soon as its session ends, so a crashed node leaves no zombie lock"
	case ok && access.known:
		return dialects.StrategyTable, "the DBMS_LOCK system package is not installed, so there are no session locks; the lease table needs nothing but a table (" +
			installDBMSLock + " enables the session strategy)"
	default:
		return dialects.StrategyTable, "detection did not prove that DBMS_LOCK is installed; the lease table needs nothing but a table"
	}
}
