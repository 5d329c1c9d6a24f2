//go:build unix

// Package locks runs the built schedlock binary's `locks ls` and `unlock`
// against live servers and SQLite, with locks held by other processes (the
// psql and mariadb clients) and lock tables filled the way ShedLock and
// Liquibase fill them.
package locks

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/xo/dburl"

	"github.com/schedlock/schedlock/dialects/postgres"
	"github.com/schedlock/schedlock/dialects/sqlite"
	"github.com/schedlock/schedlock/internal/livetest"
	"github.com/schedlock/schedlock/internal/testbin"
)

// Environment variables naming the live servers; unset skips their tests.
const (
	envPostgres = "SCHEDLOCK_TEST_POSTGRES_DSN"
	envMySQL    = "SCHEDLOCK_TEST_MYSQL_DSN"
)

// binary is the schedlock built for this test run.
var binary string

func TestMain(m *testing.M) { testbin.Main(m, filepath.Join("..", ".."), &binary) }

// result is one run of the binary.
type result struct {
	stdout, stderr string
	code           int
}

// schedlock runs the binary with args, stdin not a terminal, and an
// environment with no DSN in it.
func schedlock(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, binary, args...)
	c.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	err := c.Run()
	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("run schedlock %v: %v", args, err)
	}
	return result{stdout: out.String(), stderr: errOut.String(), code: code}
}

// lockJSON is the part of `locks ls -o json` the tests read.
type lockJSON struct {
	Name      *string `json:"name"`
	Key       *string `json:"key"`
	State     string  `json:"state"`
	Owner     *string `json:"owner"`
	LockedAt  *string `json:"locked_at"`
	LockUntil *string `json:"lock_until"`
	Source    string  `json:"source"`
	Holder    struct {
		SessionID   *string `json:"session_id"`
		User        *string `json:"user"`
		Client      *string `json:"client"`
		Application *string `json:"application"`
		Since       *string `json:"since"`
	} `json:"holder"`
}

func listJSON(t *testing.T, args ...string) ([]lockJSON, result) {
	t.Helper()
	r := schedlock(t, append([]string{"locks", "ls", "-o", "json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("locks ls %v: exit %d\n%s", args, r.code, r.stderr)
	}
	var out []lockJSON
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("locks ls %v: not JSON: %v\n%s", args, err, r.stdout)
	}
	return out, r
}

func unique(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

func str(p *string) string {
	if p == nil {
		return "<null>"
	}
	return *p
}

// client is a database client process holding a lock; done is closed
// when it has exited.
type client struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func startClient(t *testing.T, env []string, name string, args ...string) *client {
	t.Helper()
	c := exec.Command(name, args...)
	c.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	var errOut bytes.Buffer
	c.Stderr = &errOut
	if err := c.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	cl := &client{cmd: c, done: make(chan struct{})}
	go func() {
		_ = c.Wait()
		close(cl.done)
	}()
	t.Cleanup(func() {
		_ = c.Process.Kill()
		<-cl.done
	})
	return cl
}

// waitFor polls cond every 20ms for up to 10s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func openPostgres(t *testing.T) (string, *sql.DB) {
	t.Helper()
	dsn := livetest.DSN(t, envPostgres)
	db, err := sql.Open(postgres.DriverName, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := db.Ping(); err != nil {
		t.Fatalf("%s is set but the server does not answer: %v", envPostgres, err)
	}
	return dsn, db
}

func TestPostgresSessionLockHeldByPsql(t *testing.T) {
	dsn, db := openPostgres(t)
	name := unique("e2e-nightly-")
	app := unique("sl-e2e-psql-")
	key := postgres.Key(name)
	psql := startClient(t, []string{"PGAPPNAME=" + app}, "psql", dsn, "-X", "-q",
		"-c", fmt.Sprintf("SELECT pg_advisory_lock(%d)", key), "-c", "SELECT pg_sleep(120)")
	var pid int64
	waitFor(t, "psql to take the advisory lock", func() bool {
		err := db.QueryRow(`SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
			WHERE l.locktype = 'advisory' AND l.granted AND a.application_name = $1`, app).Scan(&pid)
		return err == nil
	})

	// Listed by name, with its key and holder.
	locks, _ := listJSON(t, "--dsn", dsn, "--name", name)
	if len(locks) != 1 {
		t.Fatalf("locks ls --name %s: %+v", name, locks)
	}
	l := locks[0]
	if str(l.Name) != name || str(l.Key) != strconv.FormatInt(key, 10) || l.State != "held" || l.Source != "pg_locks" ||
		str(l.Holder.SessionID) != strconv.FormatInt(pid, 10) || str(l.Holder.User) != "postgres" || str(l.Holder.Application) != app || l.Holder.Since == nil {
		t.Errorf("listed %+v holder %+v; want pid %d, user postgres, application %s", l, l.Holder, pid, app)
	}
	// Unnamed, the key alone.
	all, _ := listJSON(t, "--dsn", dsn)
	found := false
	for _, e := range all {
		if str(e.Key) == strconv.FormatInt(key, 10) {
			found = e.Name == nil && str(e.Holder.SessionID) == strconv.FormatInt(pid, 10)
		}
	}
	if !found {
		t.Errorf("the key of psql's lock is not listed without a name: %+v", all)
	}

	// Not freed by a plain unlock; refused without confirmation.
	if r := schedlock(t, "unlock", name, "--dsn", dsn, "--yes"); r.code != 3 || !strings.Contains(r.stderr, "add --kill-session") {
		t.Errorf("unlock without --kill-session: exit %d %s", r.code, r.stderr)
	}
	if r := schedlock(t, "unlock", name, "--dsn", dsn, "--kill-session"); r.code != 2 || !strings.Contains(r.stderr, "pass --yes") {
		t.Errorf("unlock without a terminal or --yes: exit %d %s", r.code, r.stderr)
	}
	r := schedlock(t, "unlock", name, "--dsn", dsn, "--kill-session", "--dry-run")
	if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("terminate session %d", pid)) {
		t.Errorf("dry run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	select {
	case <-psql.done:
		t.Fatal("psql ended during the dry run")
	default:
	}

	r = schedlock(t, "unlock", name, "--dsn", dsn, "--kill-session", "--yes")
	if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("Terminated session %d: postgres@", pid)) || !strings.Contains(r.stdout, "is free") {
		t.Fatalf("unlock --kill-session --yes: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	select {
	case <-psql.done:
	case <-time.After(10 * time.Second):
		t.Fatal("psql still runs after its session was terminated")
	}
	if locks, _ := listJSON(t, "--dsn", dsn, "--name", name); len(locks) != 0 {
		t.Errorf("still listed after the kill: %+v", locks)
	}
	if r := schedlock(t, "unlock", name, "--dsn", dsn, "--kill-session", "--yes"); r.code != 3 || !strings.Contains(r.stderr, "not held") {
		t.Errorf("second unlock: exit %d %s", r.code, r.stderr)
	}
}

// shedLockCase fills a ShedLock table the way ShedLock does (usingDbTime:
// UTC wall clock; lockedBy = host name) and checks listing and unlocking.
type shedLockCase struct {
	dsn    string
	db     *sql.DB
	table  string
	exec   func(t *testing.T, query string, args ...any)
	isLive func(t *testing.T, name string) bool
	owner  func(t *testing.T, name string) string
}

func (c shedLockCase) run(t *testing.T) {
	// Held rows, an expired one, and a row read as held by host-a. Only the
	// table's rows: other tests may hold session locks on the same server.
	if locks, _ := listJSON(t, "--dsn", c.dsn, "--table", c.table, "--preset", "shedlock", "--strategy", "table"); len(locks) != 3 {
		t.Fatalf("locks ls --table %s: %+v", c.table, locks)
	}
	locks, r := listJSON(t, "--dsn", c.dsn, "--table", c.table)
	byName := map[string]lockJSON{}
	for _, l := range locks {
		byName[str(l.Name)] = l
	}
	for name, want := range map[string]string{"report": "held", "cleanup": "held", "sync": "expired"} {
		l := byName[name]
		if l.State != want || l.Source != c.table || l.LockedAt == nil || l.LockUntil == nil || !strings.HasSuffix(*l.LockUntil, "Z") {
			t.Errorf("%s: %+v, want %s", name, l, want)
		}
	}
	if str(byName["report"].Owner) != "host-a" || str(byName["sync"].Owner) != "host-c" {
		t.Errorf("owners: %+v", byName)
	}
	if !strings.Contains(r.stderr, "released and expired rows both show as expired") {
		t.Errorf("no note about expired rows: %q", r.stderr)
	}
	if held, _ := listJSON(t, "--dsn", c.dsn, "--table", c.table, "--state", "held", "--strategy", "table"); len(held) != 2 {
		t.Errorf("--state held: %+v", held)
	}

	// Owner-conditional: another owner is refused and nothing changes.
	r = schedlock(t, "unlock", "report", "--dsn", c.dsn, "--table", c.table, "--owner", "host-z", "--yes")
	if r.code != 3 || !strings.Contains(r.stderr, `held by "host-a", not by "host-z"`) || !c.isLive(t, "report") {
		t.Errorf("unlock --owner host-z: exit %d %s", r.code, r.stderr)
	}
	// A live lease without --owner or --force: refused in one line that
	// names the owner, the lease end and --force; nothing changes.
	for _, args := range [][]string{{"--yes"}, {"--dry-run"}} {
		r = schedlock(t, append([]string{"unlock", "report", "--dsn", c.dsn, "--table", c.table}, args...)...)
		line := strings.TrimSpace(r.stderr)
		if r.code != 3 || strings.Contains(line, "\n") || !strings.Contains(line, `is held by "host-a" until `) ||
			!strings.Contains(line, "--owner host-a") || !strings.Contains(line, "--force") || r.stdout != "" ||
			!c.isLive(t, "report") || c.owner(t, "report") != "host-a" {
			t.Errorf("unlock %v of a live lease: exit %d %q %q", args, r.code, r.stdout, r.stderr)
		}
	}
	// --dry-run changes nothing.
	r = schedlock(t, "unlock", "report", "--dsn", c.dsn, "--table", c.table, "--owner", "host-a", "--dry-run")
	if r.code != 0 || !strings.Contains(r.stdout, "Nothing changed (--dry-run).") || !c.isLive(t, "report") {
		t.Errorf("dry run: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	// The owner read: released, the row and its owner kept, as ShedLock's
	// own unlock leaves them.
	r = schedlock(t, "unlock", "report", "--dsn", c.dsn, "--table", c.table, "--owner", "host-a", "--yes")
	if r.code != 0 || c.isLive(t, "report") || c.owner(t, "report") != "host-a" {
		t.Errorf("unlock --owner host-a: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	// --force: whoever holds it.
	r = schedlock(t, "unlock", "cleanup", "--dsn", c.dsn, "--table", c.table, "--force", "--yes", "-o", "json")
	var v struct {
		Action  string   `json:"action"`
		Changed bool     `json:"changed"`
		Before  lockJSON `json:"before"`
		After   lockJSON `json:"after"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || r.code != 0 {
		t.Fatalf("unlock --force: exit %d %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if v.Action != "force-release" || !v.Changed || v.Before.State != "held" || str(v.Before.Owner) != "host-b" || v.After.State != "expired" || c.isLive(t, "cleanup") {
		t.Errorf("unlock --force JSON %+v", v)
	}
	// Not held: exit 3.
	if r := schedlock(t, "unlock", "sync", "--dsn", c.dsn, "--table", c.table, "--yes"); r.code != 3 || !strings.Contains(r.stderr, `lock "sync" is not held`) {
		t.Errorf("unlock of an expired lock: exit %d %s", r.code, r.stderr)
	}
	// A table of the wrong shape says which columns it expected.
	if r := schedlock(t, "locks", "ls", "--dsn", c.dsn, "--table", c.table, "--preset", "sys_sched_lock"); r.code != 2 || !strings.Contains(r.stderr, "expected columns lock_name, expire_time, acquire_time, lock_owner") {
		t.Errorf("wrong preset: exit %d %s", r.code, r.stderr)
	}
}

func TestPostgresShedLockTable(t *testing.T) {
	dsn, db := openPostgres(t)
	table := unique("sl_e2e_shedlock_")
	exec := func(t *testing.T, q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(t, `CREATE TABLE `+table+` (name VARCHAR(64) NOT NULL, lock_until TIMESTAMP NOT NULL, locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))`)
	t.Cleanup(func() { _, _ = db.Exec("DROP TABLE IF EXISTS " + table) })
	for _, row := range []struct {
		name, owner string
		until, at   string
	}{
		{"report", "host-a", "10 minutes", "-1 minute"},
		{"cleanup", "host-b", "1 hour", "-2 minutes"},
		{"sync", "host-c", "-5 minutes", "-35 minutes"},
	} {
		exec(t, `INSERT INTO `+table+`(name, lock_until, locked_at, locked_by) VALUES ($1, timezone('utc', CURRENT_TIMESTAMP) + $2::interval, timezone('utc', CURRENT_TIMESTAMP) + $3::interval, $4)`, row.name, row.until, row.at, row.owner)
	}
	shedLockCase{
		dsn: dsn, db: db, table: table, exec: exec,
		isLive: func(t *testing.T, name string) bool {
			var live bool
			if err := db.QueryRow(`SELECT lock_until > timezone('utc', clock_timestamp()) FROM `+table+` WHERE name = $1`, name).Scan(&live); err != nil {
				t.Fatal(err)
			}
			return live
		},
		owner: func(t *testing.T, name string) string {
			var owner string
			if err := db.QueryRow(`SELECT locked_by FROM `+table+` WHERE name = $1`, name).Scan(&owner); err != nil {
				t.Fatal(err)
			}
			return owner
		},
	}.run(t)
}

// mysqlTarget returns the DSN for the binary and a connection to the live
// MySQL/MariaDB server.
func mysqlTarget(t *testing.T) (string, *mysql.Config, *sql.DB) {
	t.Helper()
	dsn := livetest.DSN(t, envMySQL)
	native := dsn
	if strings.Contains(dsn, "://") {
		u, err := dburl.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		native = u.DSN
	}
	cfg, err := mysql.ParseDSN(native)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", native)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := db.Ping(); err != nil {
		t.Fatalf("%s is set but the server does not answer: %v", envMySQL, err)
	}
	return dsn, cfg, db
}

func TestMySQLSessionLockHeldByClient(t *testing.T) {
	dsn, cfg, db := mysqlTarget(t)
	name := unique("e2e-nightly-")
	// GET_LOCK names are server-wide: schedlock scopes them to the DSN's
	// database as "<database>/<name>" (docs/strategies.md).
	stored := cfg.DBName + "/" + name
	host, port, _ := strings.Cut(cfg.Addr, ":")
	args := []string{"-h", host, "-u", cfg.User, "-e", fmt.Sprintf("SELECT GET_LOCK('%s', 0); SELECT SLEEP(120)", stored)}
	if port != "" {
		args = append(args, "-P", port)
	}
	env := []string{}
	if cfg.Passwd != "" {
		env = append(env, "MYSQL_PWD="+cfg.Passwd)
	}
	cl := startClient(t, env, "mariadb", args...)
	var id sql.NullInt64
	waitFor(t, "the mariadb client to take the lock", func() bool {
		return db.QueryRow("SELECT IS_USED_LOCK(?)", stored).Scan(&id) == nil && id.Valid
	})

	var perfSchema, plugin int
	if err := db.QueryRow(`SELECT @@performance_schema, (SELECT COUNT(*) FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'METADATA_LOCK_INFO' AND PLUGIN_STATUS = 'ACTIVE')`).Scan(&perfSchema, &plugin); err != nil {
		t.Fatal(err)
	}
	_, r := listJSON(t, "--dsn", dsn)
	if canList := perfSchema == 1 || plugin == 1; !canList && !strings.Contains(r.stderr, "cannot list session locks") {
		t.Errorf("a server that cannot list gave no note: %q", r.stderr)
	}

	locks, _ := listJSON(t, "--dsn", dsn, "--name", name)
	if len(locks) != 1 {
		t.Fatalf("locks ls --name %s: %+v", name, locks)
	}
	l := locks[0]
	if str(l.Name) != name || l.State != "held" || str(l.Holder.SessionID) != strconv.FormatInt(id.Int64, 10) || str(l.Holder.User) != cfg.User || str(l.Key) != stored {
		t.Errorf("listed %+v holder %+v; want connection %d of %s", l, l.Holder, id.Int64, cfg.User)
	}

	r = schedlock(t, "unlock", name, "--dsn", dsn, "--kill-session", "--yes")
	if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("Terminated session %d", id.Int64)) {
		t.Fatalf("unlock --kill-session --yes: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	select {
	case <-cl.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the mariadb client still runs after KILL")
	}
	if err := db.QueryRow("SELECT IS_USED_LOCK(?)", stored).Scan(&id); err != nil || id.Valid {
		t.Errorf("the lock is still held by %v (%v)", id, err)
	}
}

func TestMySQLShedLockTable(t *testing.T) {
	dsn, _, db := mysqlTarget(t)
	table := unique("sl_e2e_shedlock_")
	exec := func(t *testing.T, q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(t, `CREATE TABLE `+table+` (name VARCHAR(64) NOT NULL, lock_until TIMESTAMP(3) NOT NULL, locked_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))`)
	t.Cleanup(func() { _, _ = db.Exec("DROP TABLE IF EXISTS " + table) })
	for _, row := range []struct {
		name, owner string
		untilMs, at int64
	}{
		{"report", "host-a", 600000, -60000},
		{"cleanup", "host-b", 3600000, -120000},
		{"sync", "host-c", -300000, -2100000},
	} {
		exec(t, `INSERT IGNORE INTO `+table+`(name, lock_until, locked_at, locked_by) VALUES (?, TIMESTAMPADD(MICROSECOND, ?, UTC_TIMESTAMP(3)), TIMESTAMPADD(MICROSECOND, ?, UTC_TIMESTAMP(3)), ?)`, row.name, row.untilMs*1000, row.at*1000, row.owner)
	}
	shedLockCase{
		dsn: dsn, db: db, table: table, exec: exec,
		isLive: func(t *testing.T, name string) bool {
			var live bool
			if err := db.QueryRow(`SELECT lock_until > UTC_TIMESTAMP(3) FROM `+table+` WHERE name = ?`, name).Scan(&live); err != nil {
				t.Fatal(err)
			}
			return live
		},
		owner: func(t *testing.T, name string) string {
			var owner string
			if err := db.QueryRow(`SELECT locked_by FROM `+table+` WHERE name = ?`, name).Scan(&owner); err != nil {
				t.Fatal(err)
			}
			return owner
		},
	}.run(t)
}

func TestSQLiteShedLockAndLiquibase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.db")
	db, err := sql.Open(sqlite.DriverName, sqlite.DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	exec := func(t *testing.T, q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	table := unique("sl_e2e_shedlock_")
	exec(t, `CREATE TABLE `+table+` (name VARCHAR(64) NOT NULL PRIMARY KEY, lock_until TIMESTAMP NOT NULL, locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL)`)
	for _, row := range []struct{ name, owner, until, at string }{
		{"report", "host-a", "+10 minutes", "-1 minutes"},
		{"cleanup", "host-b", "+1 hours", "-2 minutes"},
		{"sync", "host-c", "-5 minutes", "-35 minutes"},
	} {
		exec(t, `INSERT INTO `+table+` VALUES (?, strftime('%Y-%m-%d %H:%M:%f', 'now', ?), strftime('%Y-%m-%d %H:%M:%f', 'now', ?), ?)`, row.name, row.until, row.at, row.owner)
	}
	shedLockCase{
		dsn: path, db: db, table: table, exec: exec,
		isLive: func(t *testing.T, name string) bool {
			var live bool
			if err := db.QueryRow(`SELECT lock_until > strftime('%Y-%m-%d %H:%M:%f', 'now') FROM `+table+` WHERE name = ?`, name).Scan(&live); err != nil {
				t.Fatal(err)
			}
			return live
		},
		owner: func(t *testing.T, name string) string {
			var owner string
			if err := db.QueryRow(`SELECT locked_by FROM `+table+` WHERE name = ?`, name).Scan(&owner); err != nil {
				t.Fatal(err)
			}
			return owner
		},
	}.run(t)

	// Liquibase's lock, found without --table, released under its owner.
	exec(t, `CREATE TABLE DATABASECHANGELOGLOCK (ID INTEGER NOT NULL, LOCKED BOOLEAN NOT NULL, LOCKGRANTED DATETIME, LOCKEDBY VARCHAR(255), CONSTRAINT PK_DATABASECHANGELOGLOCK PRIMARY KEY (ID))`)
	exec(t, `INSERT INTO DATABASECHANGELOGLOCK VALUES (1, 1, CURRENT_TIMESTAMP, 'build-7 (10.0.0.5)')`)
	locks, _ := listJSON(t, "--dsn", path, "--name", "liquibase")
	if len(locks) != 1 || locks[0].State != "held" || str(locks[0].Owner) != "build-7 (10.0.0.5)" || locks[0].Source != "DATABASECHANGELOGLOCK" {
		t.Fatalf("liquibase: %+v", locks)
	}
	if r := schedlock(t, "unlock", "liquibase", "--dsn", path, "--owner", "build-8", "--yes"); r.code != 3 {
		t.Errorf("unlock liquibase --owner build-8: exit %d %s", r.code, r.stderr)
	}
	if r := schedlock(t, "unlock", "liquibase", "--dsn", path, "--yes"); r.code != 3 || !strings.Contains(r.stderr, "with no lease end") || !strings.Contains(r.stderr, "--force") {
		t.Errorf("unlock liquibase without --owner: exit %d %s", r.code, r.stderr)
	}
	if r := schedlock(t, "unlock", "liquibase", "--dsn", path, "--owner", "build-7 (10.0.0.5)", "--yes"); r.code != 0 {
		t.Errorf("unlock liquibase: exit %d %s", r.code, r.stderr)
	}
	var locked int
	if err := db.QueryRow(`SELECT LOCKED FROM DATABASECHANGELOGLOCK`).Scan(&locked); err != nil || locked != 0 {
		t.Errorf("LOCKED = %d, %v", locked, err)
	}
}
