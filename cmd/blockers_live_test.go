package cmd

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"
	"time"

	mysqldriver "github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/internal/livetest"
)

// blockerTable is a fresh native lock table with a row for name, made by
// a run, dropped at the end.
func blockerTable(t *testing.T, dsn string, db *sql.DB, name string) string {
	t.Helper()
	var b [5]byte
	_, _ = rand.Read(b[:])
	table := "blk_" + hex.EncodeToString(b[:])
	r := execRun(t, context.Background(), "", "run", "--dsn", dsn, "--strategy", "table", "--table", table, "--create-table", "--history", "0", "--name", name, "--", "true")
	if r.code != 0 {
		t.Fatalf("setup run: exit %d %v", r.code, r.err)
	}
	t.Cleanup(func() { _, _ = db.Exec("DROP TABLE " + table) })
	return table
}

// checkBlockerNamed runs `run --timeout 2s` and `locks ls` on table while
// session id blocks it, and fails t unless both name the session with the
// statement that ends it. tableRead says whether ls can still read the
// table (a row lock) or only the server's views (a lock on the table).
func checkBlockerNamed(t *testing.T, dsn, table, name, id, terminate string, tableRead bool) {
	t.Helper()
	ran := t.TempDir() + "/ran"
	r := execRun(t, context.Background(), "", "run", "--dsn", dsn, "--strategy", "table", "--table", table, "--timeout", "2s", "--name", name, "--", "touch", ran)
	if r.code != CodeError || r.err == nil {
		t.Fatalf("run against a blocked table: exit %d, %v", r.code, r.err)
	}
	msg := r.err.Error()
	for _, want := range []string{`gave up on lock "` + name + `" after --timeout 2s: session ` + id + " (", "in a transaction open since", "end it with: " + terminate} {
		if !strings.Contains(msg, want) {
			t.Errorf("run's message %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("run's message is more than one line: %q", msg)
	}
	ls := runCmd(t, false, nil, "locks", "ls", "--dsn", dsn, "--table", table, "--all", "--timeout", "20s")
	if ls.err != nil {
		t.Fatalf("locks ls while %s blocks %s: %v\n%s", id, table, ls.err, ls.stderr)
	}
	if !strings.Contains(ls.stderr, "schedlock: warning: session "+id+" (") || !strings.Contains(ls.stderr, "end it with: "+terminate) {
		t.Errorf("locks ls does not name session %s:\n%s", id, ls.stderr)
	}
	if read := strings.Contains(ls.stdout, name); read != tableRead {
		t.Errorf("locks ls listed the table's row: %v, want %v:\n%s\n%s", read, tableRead, ls.stdout, ls.stderr)
	}
	if !tableRead && !strings.Contains(ls.stderr, "the lock tables could not be read within") {
		t.Errorf("locks ls does not say the table could not be read:\n%s", ls.stderr)
	}
	w := runCmd(t, false, nil, "locks", "ls", "--dsn", dsn, "--table", table, "--watch", "1s", "--timeout", "15s")
	if w.err != nil || !strings.Contains(w.stderr, "schedlock: warning: session "+id+" (") {
		t.Errorf("locks ls --watch does not name session %s: %v\n%s", id, w.err, w.stderr)
	}
}

// A session holding ACCESS EXCLUSIVE on the lock table in an open
// transaction: run gives up naming it, and locks ls names it while
// listing what the server's views show.
func TestBlockerNamedPostgresLive(t *testing.T) {
	dsn := livetest.DSN(t, livetest.Postgres)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	table := blockerTable(t, dsn, db, "job")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	holder, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	var pid int64
	if err := holder.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"SET application_name = 'migration'", "BEGIN", "LOCK TABLE " + table + " IN ACCESS EXCLUSIVE MODE"} {
		if _, err := holder.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	defer func() { _, _ = holder.ExecContext(ctx, "ROLLBACK") }()
	id := strconv.FormatInt(pid, 10)
	checkBlockerNamed(t, dsn, table, "job", id, "SELECT pg_terminate_backend("+id+")", false)
}

// A connection whose open transaction locks the lock's row: run gives up
// naming it, and locks ls lists the table and names it.
func TestBlockerNamedMariaDBLive(t *testing.T) {
	dsn := livetest.DSN(t, livetest.MySQL)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	table := blockerTable(t, dsn, db, "job")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	holder, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	var id string
	if err := holder.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"START TRANSACTION", "SELECT * FROM " + table + " WHERE name = 'job' FOR UPDATE"} {
		if _, err := holder.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	defer func() { _, _ = holder.ExecContext(ctx, "ROLLBACK") }()
	checkBlockerNamed(t, dsn, table, "job", id, "KILL "+id, true)
}

// detect names a session holding a lock on a known lock table.
func TestDetectNamesBlockerLive(t *testing.T) {
	dsn := livetest.DSN(t, livetest.Postgres)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// A ShedLock table of its own, found through the search path.
	var b [5]byte
	_, _ = rand.Read(b[:])
	schema := "blk_" + hex.EncodeToString(b[:])
	if _, err := db.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = db.Exec("DROP SCHEMA " + schema + " CASCADE") }()
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+schema+".shedlock (name VARCHAR(64) NOT NULL PRIMARY KEY, lock_until TIMESTAMP NOT NULL, locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	holder, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	var pid int64
	if err := holder.QueryRowContext(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"BEGIN", "LOCK TABLE " + schema + ".shedlock IN EXCLUSIVE MODE"} {
		if _, err := holder.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	defer func() { _, _ = holder.ExecContext(ctx, "ROLLBACK") }()
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	r := runCmd(t, false, nil, "detect", "--dsn", dsn+sep+"search_path="+schema, "--timeout", "60s")
	id := strconv.FormatInt(pid, 10)
	if r.err != nil || !strings.Contains(r.stderr, "schedlock: warning: session "+id+" (") || !strings.Contains(r.stderr, "holds ExclusiveLock on shedlock") || !strings.Contains(r.stderr, "end it with: SELECT pg_terminate_backend("+id+")") {
		t.Errorf("detect while session %s holds EXCLUSIVE on shedlock: %v\n%s", id, r.err, r.stderr)
	}
}

// A user who may not read InnoDB's transaction views (no PROCESS) gets
// run's timeout with the reason the blocking session could not be named.
func TestBlockerLookupRefusedMariaDBLive(t *testing.T) {
	dsn := livetest.DSN(t, livetest.MySQL)
	cfg, err := mysqldriver.ParseDSN(dsn)
	if err != nil {
		t.Fatalf("not a go-sql-driver DSN: %v", err)
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	table := blockerTable(t, dsn, db, "job")
	user := "noproc_" + table[len("blk_"):]
	for _, q := range []string{"CREATE USER '" + user + "'@'%' IDENTIFIED BY 'pw'", "GRANT ALL ON `" + cfg.DBName + "`.* TO '" + user + "'@'%'"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	defer func() { _, _ = db.Exec("DROP USER '" + user + "'@'%'") }()
	cfg.User, cfg.Passwd = user, "pw"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	holder, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	for _, q := range []string{"START TRANSACTION", "SELECT * FROM " + table + " WHERE name = 'job' FOR UPDATE"} {
		if _, err := holder.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	defer func() { _, _ = holder.ExecContext(ctx, "ROLLBACK") }()
	r := execRun(t, context.Background(), "", "run", "--dsn", cfg.FormatDSN(), "--strategy", "table", "--table", table, "--timeout", "2s", "--name", "job", "--", "true")
	msg := ""
	if r.err != nil {
		msg = r.err.Error()
	}
	if r.code != CodeError || !strings.Contains(msg, `gave up on lock "job" after --timeout 2s: the sessions that may block it could not be looked up: `) || !strings.Contains(msg, "PROCESS") {
		t.Errorf("run as a user without PROCESS: exit %d, %q", r.code, msg)
	}
	if strings.Contains(msg, "pw@") || strings.Contains(msg, ":pw") {
		t.Errorf("the password is in the message: %q", msg)
	}
}
