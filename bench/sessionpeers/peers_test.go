package sessionpeers_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/golang-migrate/migrate/v4/database"
	migratemysql "github.com/golang-migrate/migrate/v4/database/mysql"
	migratepgx "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	"github.com/pressly/goose/v3/lock"

	"github.com/schedlock/schedlock/internal/livetest"
)

// migrateCycle is golang-migrate's lock: Lock (pg_advisory_lock, or
// GET_LOCK(name, 10) on MySQL) and Unlock on the connection its driver
// pinned, as `migrate up` takes it. Its driver makes a version table of
// its own, dropped at the end.
func migrateCycle(b *testing.B, driver string, db *sql.DB) cycler {
	table := fmt.Sprintf("sl_peer_migrate_%d", rand.Uint32())
	var d database.Driver
	var err error
	switch driver {
	case "pgx":
		d, err = migratepgx.WithInstance(db, &migratepgx.Config{MigrationsTable: table})
	default:
		d, err = migratemysql.WithInstance(db, &migratemysql.Config{MigrationsTable: table})
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _, _ = db.Exec("DROP TABLE IF EXISTS " + table) })
	return cycler{"migrate", func(context.Context) error {
		if err := d.Lock(); err != nil {
			return err
		}
		return d.Unlock()
	}}
}

// postgresPeers are the Go peers of a PostgreSQL session lock:
// golang-migrate's pgx/v5 driver and goose's session locker
// (pg_try_advisory_lock, pg_advisory_unlock on a pinned *sql.Conn).
func postgresPeers(b *testing.B, ctx context.Context) []cycler {
	db, err := sql.Open("pgx", livetest.DSN(b, livetest.Postgres))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	goose, err := lock.NewPostgresSessionLocker(lock.WithLockID(rand.Int64()))
	if err != nil {
		b.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = conn.Close() })
	return []cycler{migrateCycle(b, "pgx", db), {"goose", func(ctx context.Context) error {
		if err := goose.SessionLock(ctx, conn); err != nil {
			return err
		}
		return goose.SessionUnlock(ctx, conn)
	}}}
}

// mysqlPeers are the Go peers of a MySQL session lock: golang-migrate's
// mysql driver (goose has no session locker on MySQL).
func mysqlPeers(b *testing.B, _ context.Context, dsn string) []cycler {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	return []cycler{migrateCycle(b, "mysql", db)}
}
