package postgres

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"testing"
	"time"

	"github.com/schedlock/schedlock/internal/livetest"
)

// dsnEnv names the variable that holds the live test server's URL, e.g.
// postgres://postgres@127.0.0.1:5432/test?sslmode=disable.
const dsnEnv = "SCHEDLOCK_TEST_POSTGRES_DSN"

// liveDSN returns the live server's DSN, skipping the test when it is unset.
func liveDSN(t testing.TB) string {
	t.Helper()
	dsn := livetest.DSN(t, dsnEnv)
	return dsn
}

// liveDB opens the live server and fails (never skips) when it does not
// answer.
func liveDB(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open(DriverName, liveDSN(t))
	if err != nil {
		t.Fatalf("open %s: %v", dsnEnv, err)
	}
	t.Cleanup(func() { _ = db.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		t.Fatalf("the server in %s does not answer: %v", dsnEnv, err)
	}
	return db
}

// testCtx is a context that ends with the test (or after a minute).
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// unique returns prefix followed by 12 random hex digits: a lock or table
// name no other test run uses.
func unique(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// conn pins one connection of db for the test.
func conn(t testing.TB, db *sql.DB) *sql.Conn {
	t.Helper()
	c, err := db.Conn(testCtx(t))
	if err != nil {
		t.Fatalf("get a connection: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// backendPID returns the pid of c's backend.
func backendPID(t testing.TB, c *sql.Conn) int64 {
	t.Helper()
	var pid int64
	if err := c.QueryRowContext(testCtx(t), "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatalf("pg_backend_pid: %v", err)
	}
	return pid
}
