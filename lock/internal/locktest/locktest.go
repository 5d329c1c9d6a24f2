// Package locktest holds what the live tests of the lock package's users
// (WithLock, cronlock, gocronlock) share: the databases and strategies to
// run on, and a lock.DB whose lease table exists.
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

// LiveDSNs are the databases and strategies the tests run on, by
// "backend/strategy": SQLite always (a file in the test's temporary
// directory) with the table strategy on table; PostgreSQL and
// MariaDB/MySQL, when their test DSNs are set, with the table strategy on
// table and with the session strategy as Open picks it by default (no
// x-strategy: Open checks that it is the session strategy).
func LiveDSNs(t *testing.T, table string) map[string]string {
	t.Helper()
	dsns := map[string]string{"sqlite/table": WithOption(WithOption(WithOption(filepath.Join(t.TempDir(), "locks.db"), "x-create-file=true"), "x-strategy=table"), "x-table="+table)}
	for name, env := range map[string]string{"postgres": "SCHEDLOCK_TEST_POSTGRES_DSN", "mysql": "SCHEDLOCK_TEST_MYSQL_DSN"} {
		v := os.Getenv(env)
		if v == "" {
			t.Logf("%s not set: no %s run", env, name)
			continue
		}
		dsns[name+"/table"] = WithOption(WithOption(v, "x-strategy=table"), "x-table="+table)
		dsns[name+"/session"] = v
	}
	return dsns
}

// SQLite is the SQLite DSN of dsns (LiveDSNs).
func SQLite(dsns map[string]string) string { return dsns["sqlite/table"] }

// WithOption adds an x- option to a DSN of any form.
func WithOption(dsn, option string) string {
	if strings.Contains(dsn[strings.LastIndexByte(dsn, '/')+1:], "?") {
		return dsn + "&" + option
	}
	return dsn + "?" + option
}

// Open opens dsn for the test, closed at its end, and creates the lease
// table the first time this process opens dsn (nothing on the session
// strategy).
func Open(t *testing.T, dsn string) *lock.DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	db, err := lock.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if !strings.Contains(dsn, "x-strategy=") && db.Strategy() != lock.StrategySession {
		t.Fatalf("%s opened with the %s strategy by default, want the session strategy", db.Info().Dialect, db.Strategy())
	}
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
