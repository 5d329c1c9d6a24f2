package cmd

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/schedlock/schedlock/internal/livetest"
)

// maxRunStatements is what `schedlock run -- true` may send on the session
// strategy, acquire and release included, the history write aside
// (--history 0); a lease table in the database adds the one read of the
// pause check.
const maxRunStatements = 4

// statementCounter counts, on the server, the statements a command sends
// to a database (PostgreSQL) or as a user (MariaDB) of its own.
type statementCounter struct {
	dsn   string                   // the DSN the command is given
	count func(t *testing.T) int64 // statements so far, once the command's connections are gone
	// pauseRead is what the pause check's one read of the lease table
	// costs in this count: the statement, and the prepare and close
	// around it (package locktable prepares the lease table's
	// statements; on PostgreSQL each is a transaction, as is the
	// statement's own describe).
	pauseRead int64
	// perConn is what the count grows by for a connection that sends
	// nothing: a command here opens one.
	perConn int64
}

// TestRunTrueStatementsLive counts, in the server's own statistics, the
// statements of `schedlock run --name N -- true` on the session strategy:
// at most maxRunStatements without a lease table (detection, the lock
// connection's partition guard, the try and the unlock: no ping of its
// own, no probe that fails, no pause read, nothing prepared), one more
// (the pause check's read) once a lease table exists.
func TestRunTrueStatementsLive(t *testing.T) {
	for _, c := range []struct {
		name  string
		env   string
		start func(t *testing.T, raw string) statementCounter
	}{{"postgres", livetest.Postgres, postgresCounter}, {"mysql", livetest.MySQL, mysqlCounter}} {
		t.Run(c.name, func(t *testing.T) {
			sc := c.start(t, livetest.DSN(t, c.env))
			run := func(args ...string) int64 {
				t.Helper()
				before := sc.count(t)
				r := runCmd(t, false, nil, append([]string{"run", "--dsn", sc.dsn}, args...)...)
				if r.err != nil {
					t.Fatalf("run %v: %v\n%s", args, r.err, r.stderr)
				}
				return sc.count(t) - before - sc.perConn
			}
			if n := run("--name", "count", "--strategy", "session", "--history", "0", "--", "true"); n > maxRunStatements {
				t.Errorf("run -- true sent %d statements without a lease table, want at most %d", n, maxRunStatements)
			} else {
				t.Logf("run -- true: %d statements without a lease table", n)
			}
			run("--name", "setup", "--strategy", "table", "--create-table", "--", "true")
			if n := run("--name", "count", "--strategy", "session", "--history", "0", "--", "true"); n > maxRunStatements+sc.pauseRead {
				t.Errorf("run -- true sent %d statements with a lease table, want at most %d", n, maxRunStatements+sc.pauseRead)
			} else {
				t.Logf("run -- true: %d statements with a lease table", n)
			}
		})
	}
}

// postgresCounter makes a database of the test's own and counts the
// transactions pg_stat_database records for it (every statement, prepare
// or ping outside a transaction block is one), less those a connection
// costs by itself (measured with a connection that sends nothing).
func postgresCounter(t *testing.T, raw string) statementCounter {
	admin, err := sql.Open("pgx", raw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	ctx := context.Background()
	name := randomName("sl_count_")
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.ExecContext(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)") })
	u := livePostgresURL(t)
	u.Path = "/" + name
	dsn := u.String()
	transactions := func(t *testing.T) int64 {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		last := int64(-1)
		for {
			// A backend reports its statistics when it ends: wait until
			// none is connected and the count has settled.
			var backends, n int64
			err := admin.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM pg_stat_activity WHERE datname = $1),
				(SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = $1)`, name).Scan(&backends, &n)
			if err != nil {
				t.Fatal(err)
			}
			if backends == 0 && n == last {
				return n
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d backends still on %s after 30s", backends, name)
			}
			last = n
			time.Sleep(200 * time.Millisecond)
		}
	}
	before := transactions(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.Close(ctx)
	return statementCounter{dsn: dsn, count: transactions, perConn: transactions(t) - before, pauseRead: 4}
}

// mysqlCounter makes a database and a user of the test's own and counts the statements
// performance_schema records for it (every command but connect and quit:
// prepares and closes of prepared statements count).
func mysqlCounter(t *testing.T, raw string) statementCounter {
	cfg, err := mysql.ParseDSN(raw)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := sql.Open("mysql", raw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	ctx := context.Background()
	// For 127.0.0.1, not '%': an anonymous ''@localhost account would
	// shadow a '%' account.
	user := randomName("sl_count_")
	for _, q := range []string{
		"CREATE DATABASE " + user,
		fmt.Sprintf("CREATE USER '%s'@'127.0.0.1'", user),
		fmt.Sprintf("GRANT ALL ON `%s`.* TO '%s'@'127.0.0.1'", user, user),
	} {
		if _, err := admin.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_, _ = admin.ExecContext(context.Background(), fmt.Sprintf("DROP USER '%s'@'127.0.0.1'", user))
		_, _ = admin.ExecContext(context.Background(), "DROP DATABASE "+user)
	})
	c := cfg.Clone()
	c.User, c.Passwd, c.DBName = user, "", user
	count := func(t *testing.T) int64 {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			var conns, n sql.NullInt64
			err := admin.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = ?),
				(SELECT SUM(COUNT_STAR) FROM performance_schema.events_statements_summary_by_user_by_event_name WHERE USER = ? AND EVENT_NAME <> 'statement/com/Quit')`, user, user).Scan(&conns, &n)
			if err != nil {
				t.Fatalf("read performance_schema (the server needs --performance-schema=ON): %v", err)
			}
			if conns.Int64 == 0 {
				return n.Int64
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d connections of %s still open after 30s", conns.Int64, user)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return statementCounter{dsn: c.FormatDSN(), count: count, pauseRead: 3}
}
