package mysql

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/dialects"
)

// limitUser creates a throwaway account on the live server (with extra
// account options, e.g. "WITH MAX_USER_CONNECTIONS 1"), dropped at the end,
// and returns it and a function opening a pool as it without connecting.
func limitUser(t *testing.T, admin *sql.DB, options string) (string, func() *sql.DB) {
	t.Helper()
	cfg := liveConfig(t)
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil || net.ParseIP(host) == nil {
		host = "%"
	}
	user := uniqueName("lim_")
	account := "'" + user + "'@'" + host + "'"
	ctx := testContext(t)
	if _, err := admin.ExecContext(ctx, "CREATE USER "+account+" IDENTIFIED BY 'limit-test' "+options); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.ExecContext(context.Background(), "DROP USER IF EXISTS "+account) })
	if _, err := admin.ExecContext(ctx, "GRANT ALL ON `"+cfg.DBName+"`.* TO "+account); err != nil {
		t.Fatal(err)
	}
	return user, func() *sql.DB {
		c := cfg.Clone()
		c.User, c.Passwd = user, "limit-test"
		connector, err := mysql.NewConnector(c)
		if err != nil {
			t.Fatal(err)
		}
		db := sql.OpenDB(connector)
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
}

func wantConnLimit(t *testing.T, what string, err error, limitName string, start time.Time) {
	t.Helper()
	var limit *dialects.ConnLimitError
	if !errors.As(err, &limit) || !errors.Is(err, dialects.ErrConnLimit) {
		t.Fatalf("%s: got %v, want a ConnLimitError", what, err)
	}
	if limit.Limit != limitName || !strings.Contains(err.Error(), limitName) || limit.Raise == "" {
		t.Fatalf("%s: %+v (%v) does not name %s and how to raise it", what, limit, err, limitName)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("%s: refused after %s, want at once", what, d)
	}
	t.Logf("%s: %v", what, err)
}

// An account at its MAX_USER_CONNECTIONS (error 1226) gets a
// *dialects.ConnLimitError naming max_user_connections from detection, the
// table locker and the session locker.
func TestConnLimitPerUserLive(t *testing.T) {
	admin := openLive(t, nil)
	_, open := limitUser(t, admin, "WITH MAX_USER_CONNECTIONS 1")
	ctx := testContext(t)

	db := open()
	detected, err := New(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := detected.TableLocker(dialects.Table{Name: uniqueName("connlimit_")})
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tl.(dialects.TableDropper).DropTable(context.Background()) })
	sl, err := detected.SessionLocker()
	if err != nil {
		t.Fatal(err)
	}

	held, err := db.Conn(ctx) // the account's one connection
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()

	start := time.Now()
	_, err = New(ctx, open(), nil)
	wantConnLimit(t, "detect", err, "max_user_connections", start)
	start = time.Now()
	_, err = tl.Acquire(ctx, uniqueName("job_"), dialects.Options{})
	wantConnLimit(t, "table acquire", err, "max_user_connections", start)
	start = time.Now()
	_, err = sl.Acquire(ctx, uniqueName("job_"), dialects.Options{})
	wantConnLimit(t, "session acquire", err, "max_user_connections", start)
}

// A server at max_connections (error 1040) refuses a session lock with a
// *dialects.ConnLimitError naming max_connections. The test lowers the
// server's max_connections for a moment and restores it.
func TestConnLimitServerLive(t *testing.T) {
	admin := openLive(t, nil)
	_, open := limitUser(t, admin, "")
	ctx := testContext(t)
	var orig int
	if err := admin.QueryRowContext(ctx, "SELECT @@GLOBAL.max_connections").Scan(&orig); err != nil {
		t.Fatal(err)
	}
	restore := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "SET GLOBAL max_connections = ?", orig); err != nil {
			t.Errorf("restore max_connections = %d: %v", orig, err)
		}
	}
	t.Cleanup(restore)
	admin.SetMaxIdleConns(1)
	adminConn, err := admin.Conn(ctx) // the restore must not need a new connection
	if err != nil {
		t.Fatal(err)
	}
	_ = adminConn.Close()

	detected, err := New(ctx, open(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var leases []dialects.Lease
	var lockers []io.Closer
	defer func() {
		for _, l := range leases {
			_ = l.Release(context.Background())
		}
		for _, l := range lockers {
			_ = l.Close()
		}
	}()

	// The smallest value the server takes (MariaDB: 10, MySQL: 1), then
	// one session lock per connection until one is refused: a locker per
	// lock, since one locker shares a few connections among its locks.
	if _, err := admin.ExecContext(ctx, "SET GLOBAL max_connections = 1"); err != nil {
		t.Fatal(err)
	}
	var lowered int
	if err := admin.QueryRowContext(ctx, "SELECT @@GLOBAL.max_connections").Scan(&lowered); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for range lowered + 2 {
		var sl dialects.Locker
		if sl, err = detected.SessionLocker(); err != nil {
			t.Fatal(err)
		}
		if c, ok := sl.(io.Closer); ok {
			lockers = append(lockers, c)
		}
		var lease dialects.Lease
		lease, err = sl.Acquire(ctx, uniqueName("job_"), dialects.Options{})
		if err != nil {
			break
		}
		leases = append(leases, lease)
	}
	restore()
	wantConnLimit(t, "session acquire", err, "max_connections", start)
	t.Logf("refused after %d connections with max_connections = %d", len(leases), lowered)
}
