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

import (
	"context"
	"database/sql"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

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
		Open:              Open,
	})
}

// Backend is an opened Dameng DM8 database: the kit's DB, DBMS_LOCK
// session locks (where the package is installed), their administration,
// the lease table and the probe. Its fields are what detection proved
// beyond Info.
type Backend struct {
	*sqlkit.DB
	// access is whether the DBMS_LOCK system package is installed and
	// visible, as New's probe answered.
	access lockAccess
}

var (
	_ dialects.Backend     = (*Backend)(nil)
	_ sqlkit.SessionEngine = (*Backend)(nil)
	_ sqlkit.AdminEngine   = (*Backend)(nil)
	_ sqlkit.ProbeEngine   = (*Backend)(nil)
)

// Open opens the database of t (the Dialect's Open): the pool of Driver,
// then New. In a build without the driver (DriverLinked false) the ping
// fails with database/sql's "unknown driver" error.
func Open(ctx context.Context, t dialects.Target) (dialects.Backend, error) {
	return sqlkit.Open(ctx, t, Driver, nil, New)
}

// New identifies the server behind pool (Detect), asks the catalog
// whether the DBMS_LOCK system package is installed (the session locker
// and the recommendation use that answer), and returns its backend, which
// owns pool. options are the DSN's x- options (nil for none).
func New(ctx context.Context, pool *sql.DB, options map[string]string) (*Backend, error) {
	info, err := Detect(ctx, pool)
	if err != nil {
		return nil, dialects.Wrap(Name, "detect", err)
	}
	access, err := probeDBMSLock(ctx, pool)
	if err != nil {
		return nil, dialects.Wrap(Name, "detect", err)
	}
	b := &Backend{access: access}
	b.DB = sqlkit.New(pool, info, options, b)
	return b, nil
}

// NewSessionLocker implements sqlkit.SessionEngine: the DBMS_LOCK locker,
// only when New proved the DBMS_LOCK system package installed. Otherwise
// it refuses with an error matching dialects.ErrUnsupported that names the
// call installing the package (CALL SP_CREATE_SYSTEM_PACKAGES(1,
// 'DBMS_LOCK')) and the table strategy; it never hands out a locker that
// might not exclude. Dameng's lock names take no options, so n is not
// read.
func (b *Backend) NewSessionLocker(dialects.SessionNames) (dialects.Locker, error) {
	return newSessionLocker(b.SQL, b.access)
}

// NewLockAdmin implements sqlkit.AdminEngine: the known lock tables where
// unqualified names resolve, DBMS_LOCK locks from V$LOCK, and
// SP_CLOSE_SESSION.
func (b *Backend) NewLockAdmin(dialects.SessionNames) dialects.LockAdmin {
	return &LockAdmin{db: b.SQL, ops: &SessionOps{}}
}

// NewTableLocker implements sqlkit.Engine (see the function
// NewTableLocker).
func (b *Backend) NewTableLocker(t dialects.Table) (dialects.TableLocker, error) {
	return NewTableLocker(b.SQL, b.Info, t)
}

// RecommendStrategy implements sqlkit.Engine: the lease table unless New
// proved that DBMS_LOCK is installed.
func (b *Backend) RecommendStrategy() (dialects.Strategy, string) { return recommend(b.access) }

// ProbeDialect implements sqlkit.ProbeEngine (see Probe).
func (b *Backend) ProbeDialect(ctx context.Context, opts dialects.ProbeOptions) (dialects.Capabilities, error) {
	return Probe(ctx, b.SQL, b.Info, opts)
}
