// Package locktest holds what the live tests of the scheduler adapters
// (cronlock, gocronlock) share: the databases to run on and a lock.DB
// whose lease table exists.
package locktest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/schedlock/schedlock/lock"
)

// LiveDSNs are the databases the tests run on, with the table strategy on
// table: SQLite always (a file in the test's temporary directory),
// PostgreSQL and MariaDB/MySQL when their test DSNs are set.
func LiveDSNs(t *testing.T, table string) map[string]string {
	t.Helper()
	dsns := map[string]string{"sqlite": filepath.Join(t.TempDir(), "locks.db")}
	for name, env := range map[string]string{"postgres": "SCHEDLOCK_TEST_POSTGRES_DSN", "mysql": "SCHEDLOCK_TEST_MYSQL_DSN"} {
		if v := os.Getenv(env); v != "" {
			dsns[name] = v
		} else {
			t.Logf("%s not set: no %s run", env, name)
		}
	}
	for name, dsn := range dsns {
		dsns[name] = WithOption(WithOption(dsn, "x-strategy=table"), "x-table="+table)
	}
	return dsns
}

// WithOption adds an x- option to a DSN of any form.
func WithOption(dsn, option string) string {
	if strings.Contains(dsn[strings.LastIndexByte(dsn, '/')+1:], "?") {
		return dsn + "&" + option
	}
	return dsn + "?" + option
}

// Open opens dsn for the test, closed at its end, and creates the lease
// table the first time this process opens dsn.
func Open(t *testing.T, dsn string) *lock.DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	db, err := lock.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	createTableOnce(t, ctx, db, dsn)
	return db
}

// tables are the DSNs whose lease table this process has created; the
// lock serialises the creation, which PostgreSQL refuses to run twice at
// once even with IF NOT EXISTS (a duplicate key in pg_type).
var tables = struct {
	sync.Mutex
	created map[string]bool
}{created: map[string]bool{}}

func createTableOnce(t *testing.T, ctx context.Context, db *lock.DB, dsn string) {
	t.Helper()
	tables.Lock()
	defer tables.Unlock()
	if tables.created[dsn] {
		return
	}
	if err := db.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	tables.created[dsn] = true
}
