package sqlserver

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xo/dburl"

	"github.com/schedlock/schedlock/internal/livetest"
)

// dsnEnv names the variable that points live tests at a server, as a
// sqlserver:// URL (go-mssqldb's own form; mssql:// and other dburl
// aliases are converted).
const dsnEnv = "SCHEDLOCK_TEST_SQLSERVER_DSN"

// liveDSN returns the driver DSN of the live server, skipping the test when
// dsnEnv is unset.
func liveDSN(t testing.TB) string {
	t.Helper()
	dsn := livetest.DSN(t, dsnEnv)
	if strings.HasPrefix(dsn, "sqlserver://") {
		return dsn
	}
	u, err := dburl.Parse(dsn)
	if err != nil {
		t.Fatalf("%s is not a usable URL: %v", dsnEnv, err)
	}
	return u.DSN
}

// liveDB opens the live server, failing the test when it does not answer.
func liveDB(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlserver", liveDSN(t))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		t.Fatalf("%s is set but the server does not answer: %v", dsnEnv, err)
	}
	return db
}

// liveDetected opens the live server and runs detection on it.
func liveDetected(t testing.TB) *Backend {
	t.Helper()
	db, err := New(testContext(t), liveDB(t), nil)
	if err != nil {
		t.Fatalf("detect: %v", err)
	}
	return db
}

// testContext is cancelled when the test ends, and after two minutes.
func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestLiveDetect checks detection against the live server.
func TestLiveDetect(t *testing.T) {
	db := liveDetected(t)
	if db.Info.Product != Product || db.Info.Version == "" || db.Info.Banner == "" {
		t.Errorf("Info = %+v; want product %s with a version and banner", db.Info, Product)
	}
	t.Logf("detected %+v (%s)", db.Info, ReleaseName(db.Info))
}

// TestLiveSessionListing takes an application lock and finds it, and its
// session, in sys.dm_tran_locks.
func TestLiveSessionListing(t *testing.T) {
	db := liveDetected(t)
	ctx := testContext(t)
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer discardConn(conn)
	var spid int64
	if err := conn.QueryRowContext(ctx, "SELECT @@SPID").Scan(&spid); err != nil {
		t.Fatal(err)
	}
	name := "schedlock-live-listing-" + time.Now().Format("150405.000000") + "-with-a-long-tail"
	ops := &SessionOps{Info: db.Info}
	if ok, err := ops.TryLock(ctx, conn, name); err != nil || !ok {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	e, found, err := db.LockAdmin().SessionLock(ctx, name)
	if err != nil || !found || e.Holder == nil {
		t.Fatalf("SessionLock = %+v, %v, %v (VIEW SERVER STATE is needed)", e, found, err)
	}
	if want := strconv.FormatInt(spid, 10); e.Holder.SessionID != want {
		t.Errorf("SessionLock's holder = %q, want @@SPID %s", e.Holder.SessionID, want)
	}
	holder := e.Holder.SessionID
	entries, err := db.LockAdmin().SessionLocks(ctx, []string{name})
	if err != nil {
		t.Fatal(err)
	}
	listed := false
	for _, e := range entries {
		if e.Name == name && e.Holder != nil && e.Holder.SessionID == holder {
			listed = true
		}
	}
	if !listed {
		t.Errorf("SessionLocks does not list %q held by %s: %+v", name, holder, entries)
	}
	if ok, err := ops.Unlock(ctx, conn, name); err != nil || !ok {
		t.Errorf("Unlock = %v, %v", ok, err)
	}
}

func discardConn(c *sql.Conn) {
	_ = c.Raw(func(any) error { return driver.ErrBadConn })
	_ = c.Close()
}
