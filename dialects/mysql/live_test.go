package mysql

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/xo/dburl"

	"github.com/schedlock/schedlock/internal/livetest"
)

// dsnEnv names the variable that points live tests at a server, in
// go-sql-driver form (root@tcp(127.0.0.1:3306)/test) or as a mysql:// URL.
const dsnEnv = "SCHEDLOCK_TEST_MYSQL_DSN"

// liveConfig returns the driver config of the live server, skipping the
// test when dsnEnv is unset.
func liveConfig(t testing.TB) *mysql.Config {
	t.Helper()
	dsn := livetest.DSN(t, dsnEnv)
	if strings.Contains(dsn, "://") {
		u, err := dburl.Parse(dsn)
		if err != nil {
			t.Fatalf("%s is not a usable URL: %v", dsnEnv, err)
		}
		dsn = u.DSN
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatalf("%s is not a go-sql-driver DSN: %v", dsnEnv, err)
	}
	return cfg
}

// openLive opens the live server with cfg changed by tweak (may be nil),
// failing the test when it does not answer.
func openLive(t testing.TB, tweak func(*mysql.Config)) *sql.DB {
	t.Helper()
	cfg := liveConfig(t)
	if tweak != nil {
		tweak(cfg)
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatalf("connector: %v", err)
	}
	db := sql.OpenDB(connector)
	t.Cleanup(func() { _ = db.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		t.Fatalf("%s is set but the server does not answer: %v", dsnEnv, err)
	}
	return db
}

// openDetected opens the live server and runs detection on it.
func openDetected(t testing.TB) *Backend {
	t.Helper()
	db := openLive(t, nil)
	d, err := New(testContext(t), db, nil)
	if err != nil {
		t.Fatalf("detect: %v", err)
	}
	return d
}

// testContext is cancelled when the test ends, and after a minute.
func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// uniqueName returns prefix and 12 random hex digits: a fresh lock or
// table name per test.
func uniqueName(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// conn takes one pinned connection from db, closed at the end of the test.
func conn(t testing.TB, db *sql.DB) *sql.Conn {
	t.Helper()
	c, err := db.Conn(testContext(t))
	if err != nil {
		t.Fatalf("get connection: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// connectionID returns CONNECTION_ID() of c.
func connectionID(t testing.TB, c *sql.Conn) string {
	t.Helper()
	var id string
	if err := c.QueryRowContext(testContext(t), "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatalf("CONNECTION_ID(): %v", err)
	}
	return id
}
