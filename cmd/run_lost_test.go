//go:build unix

package cmd

import (
	"context"
	"database/sql"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects/mysql"
	"github.com/schedlock/schedlock/dialects/postgres"
	"github.com/schedlock/schedlock/internal/livetest"
)

// runInBackground starts `schedlock run` with args and returns the
// channel its result arrives on.
func runInBackground(t *testing.T, args ...string) <-chan runResult {
	t.Helper()
	done := make(chan runResult, 1)
	go func() { done <- execRun(t, context.Background(), "", args...) }()
	return done
}

// awaitRun waits for the run's result.
func awaitRun(t *testing.T, done <-chan runResult) runResult {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(time.Minute):
		t.Fatal("run did not end within a minute")
	}
	return runResult{}
}

// openPostgres opens the test server's database with pgx.
func openPostgres(t *testing.T, raw string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", raw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// Dropping the lock table under a running table lease makes every refresh
// fail; run stops the command before the lease ends and says why in the
// database's own words.
func TestRunLeaseLostSaysWhyTableDropped(t *testing.T) {
	raw := liveSessionDSN(t)
	db := openPostgres(t, raw)
	table := "run_lost_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	t.Cleanup(func() { _, _ = db.Exec("DROP TABLE IF EXISTS " + table) })
	started := filepath.Join(t.TempDir(), "started")
	done := runInBackground(t, "run", "--dsn", raw, "--name", "dropped", "--table", table, "--create-table",
		"--at-most", "3s", "--kill-grace", "200ms", "--", "sh", "-c", "touch "+started+"; sleep 60")
	waitForFile(t, started)
	if _, err := db.Exec("DROP TABLE " + table); err != nil {
		t.Fatal(err)
	}
	r := awaitRun(t, done)
	if r.code != CodeLeaseLost {
		t.Fatalf("exit %d (%v), want %d", r.code, r.err, CodeLeaseLost)
	}
	msg := r.err.Error()
	if !strings.Contains(msg, `relation "`+table+`" does not exist`) || strings.Contains(msg, "\n") {
		t.Errorf("error %q: want one line with the database's reason", msg)
	}
}

// Terminating the session that holds a session lock ends the lock; run
// stops the command and says that an administrator terminated it.
func TestRunLeaseLostSaysWhySessionTerminated(t *testing.T) {
	raw := liveSessionDSN(t)
	db := openPostgres(t, raw)
	name := "terminated-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	classid, objid := postgres.KeyParts(postgres.Key(name))
	started := filepath.Join(t.TempDir(), "started")
	done := runInBackground(t, "run", "--dsn", raw, "--name", name, "--strategy", "session",
		"--", "sh", "-c", "touch "+started+"; sleep 60")
	waitForFile(t, started)
	var killed int
	err := db.QueryRow(`SELECT count(pg_terminate_backend(pid)) FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND classid = $1 AND objid = $2 AND objsubid = 1`, int64(classid), int64(objid)).Scan(&killed)
	if err != nil || killed != 1 {
		t.Fatalf("terminated %d sessions: %v", killed, err)
	}
	r := awaitRun(t, done)
	if r.code != CodeLeaseLost {
		t.Fatalf("exit %d (%v), want %d", r.code, r.err, CodeLeaseLost)
	}
	msg := r.err.Error()
	if !strings.Contains(msg, "terminating connection due to administrator command") || strings.Contains(msg, "\n") {
		t.Errorf("error %q: want one line with the server's reason", msg)
	}
}

// KILL of the connection that holds a GET_LOCK ends the lock; run stops
// the command and says what the connection's end looked like.
func TestRunLeaseLostSaysWhySessionKilledMySQL(t *testing.T) {
	raw := livetest.DSN(t, livetest.MySQL)
	db, err := sql.Open("mysql", raw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	name := "killed-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	started := filepath.Join(t.TempDir(), "started")
	done := runInBackground(t, "run", "--dsn", raw, "--name", name, "--strategy", "session",
		"--", "sh", "-c", "touch "+started+"; sleep 60")
	waitForFile(t, started)
	var database string
	if err := db.QueryRow("SELECT DATABASE()").Scan(&database); err != nil {
		t.Fatal(err)
	}
	var id sql.NullInt64
	if err := db.QueryRow("SELECT IS_USED_LOCK(?)", mysql.LockName(database, name)).Scan(&id); err != nil || !id.Valid {
		t.Fatalf("holder of %q: %v (%v)", name, id, err)
	}
	if _, err := db.Exec("KILL CONNECTION " + strconv.FormatInt(id.Int64, 10)); err != nil {
		t.Fatal(err)
	}
	r := awaitRun(t, done)
	if r.code != CodeLeaseLost {
		t.Fatalf("exit %d (%v), want %d", r.code, r.err, CodeLeaseLost)
	}
	msg := r.err.Error()
	if !strings.Contains(msg, "lock connection lost") || strings.Contains(msg, "bad connection") || strings.Contains(msg, "\n") {
		t.Errorf("error %q: want one line saying how the connection ended", msg)
	}
}

// The database going away under a table lease (its port closed) makes the
// refreshes fail with "connection refused"; run says so, without the
// DSN's password. --kill-grace longer than the lease's safety margin makes
// the lease's end stop the command before the refresh loop gives up, so
// the reason comes from the lease's last refresh error.
func TestRunLeaseLostSaysWhyConnectionRefused(t *testing.T) {
	for _, s := range liveServers(t) {
		t.Run(s.name, func(t *testing.T) {
			p := proxy(t, s)
			// PostgreSQL's test server trusts local logins whatever the
			// password; MariaDB's root has none and refuses any other.
			password, raw := "s3cr3t-Pw-for-lost", s.via(p.Addr())
			if s.name == "postgres" {
				raw = withPassword(t, raw, password)
			}
			table := "run_refused_" + strconv.FormatInt(time.Now().UnixNano(), 36)
			t.Cleanup(func() { dropTable(t, s, table) })
			started := filepath.Join(t.TempDir(), "started")
			done := runInBackground(t, "run", "--dsn", raw, "--name", "refused", "--table", table, "--create-table",
				"--at-most", "3s", "--kill-grace", "1400ms", "--", "sh", "-c", "touch "+started+"; sleep 60")
			waitForFile(t, started)
			_ = p.Close()
			r := awaitRun(t, done)
			if r.code != CodeLeaseLost {
				t.Fatalf("exit %d (%v), want %d", r.code, r.err, CodeLeaseLost)
			}
			msg := r.err.Error()
			if !strings.Contains(msg, "connection refused") || strings.Contains(msg, password) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line saying the connection was refused, without the password", msg)
			}
		})
	}
}

// withPassword returns the URL raw with the user's password set.
func withPassword(t *testing.T, raw, password string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), password)
	return u.String()
}

// dropTable drops table on s, if it exists.
func dropTable(t *testing.T, s liveServer, table string) {
	driver := "pgx"
	if s.name == "mysql" {
		driver = "mysql"
	}
	db, err := sql.Open(driver, s.dsn)
	if err != nil {
		t.Error(err)
		return
	}
	defer db.Close()
	_, _ = db.Exec("DROP TABLE IF EXISTS " + table)
}
