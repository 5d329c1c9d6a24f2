//go:build unix

package cmd

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/livetest"
)

// Every command names its connections after itself. The name rides in
// the connection string the driver gets.
func TestCommandsNameTheirConnections(t *testing.T) {
	const raw = "postgres://app@db1/jobs"
	f := testFactory(nil, map[string]string{}, t.TempDir())
	appName := func(conn string) string {
		u, err := url.Parse(conn)
		if err != nil {
			t.Fatal(err)
		}
		v, err := url.PathUnescape(u.RawQuery[strings.Index(u.RawQuery, "application_name=")+len("application_name="):])
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// run names its connections after the stored lock name once the
	// namespace is known (runRun); TestRunNamesItsConnectionPostgres
	// checks what the server shows.
	sc := &SelfcheckOptions{Factory: f, Global: &GlobalOptions{DSN: raw}, Command: "schedlock selfcheck"}
	p, err := sc.plan()
	if err != nil {
		t.Fatal(err)
	}
	if got := appName(p.target.ConnString()); got != "schedlock selfcheck" {
		t.Errorf("selfcheck: application_name %q", got)
	}
	d, err := resolveAdminDSN(f, &GlobalOptions{DSN: raw}, "schedlock locks ls")
	if err != nil {
		t.Fatal(err)
	}
	if got := appName(d.ConnString()); got != "schedlock locks ls" {
		t.Errorf("locks ls: application_name %q", got)
	}
	d, err = resolveAdminDSN(f, &GlobalOptions{DSN: raw + "?application_name=ops-cron"}, "schedlock locks ls")
	if err != nil {
		t.Fatal(err)
	}
	if got := appName(d.ConnString()); got != "ops-cron" {
		t.Errorf("an application_name in the DSN must win, got %q", got)
	}
}

// startHolding starts `schedlock run` of a session lock called name whose
// command waits; it returns once the command runs, and stops it at the
// end of the test.
func startHolding(t *testing.T, raw, name string) {
	t.Helper()
	dir := t.TempDir()
	started, stop := filepath.Join(dir, "started"), filepath.Join(dir, "stop")
	done := runInBackground(t, "run", "--dsn", raw, "--name", name, "--strategy", "session", "--",
		"sh", "-c", "touch "+started+"; while [ ! -e "+stop+" ]; do sleep 0.05; done")
	t.Cleanup(func() {
		_ = os.WriteFile(stop, nil, 0o600)
		if r := awaitRun(t, done); r.err != nil {
			t.Errorf("run: %v", r.err)
		}
	})
	waitForFile(t, started)
}

// pg_stat_activity and `locks ls` show which job holds a session lock; an
// application_name in the DSN wins.
func TestRunNamesItsConnectionPostgres(t *testing.T) {
	raw := liveSessionDSN(t)
	db := openPostgres(t, raw)
	name := "appname-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	startHolding(t, raw, name)
	var n int
	if err := db.QueryRow("SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", "schedlock run "+name).Scan(&n); err != nil || n == 0 {
		t.Fatalf("sessions named %q: %d (%v)", "schedlock run "+name, n, err)
	}
	assertListedApplication(t, raw, name, "schedlock run "+name)

	mine := "mine-" + name
	sep := "?"
	if strings.Contains(raw, "?") {
		sep = "&"
	}
	startHolding(t, raw+sep+"application_name="+mine, mine)
	if err := db.QueryRow("SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", mine).Scan(&n); err != nil || n == 0 {
		t.Errorf("sessions named %q from the DSN: %d (%v)", mine, n, err)
	}
}

// MySQL and MariaDB show the program_name connection attribute in
// performance_schema.session_connect_attrs, when the server keeps that
// schema on. MariaDB's default is off: scripts/test.sh starts its server
// with --performance-schema=ON, and a server without it fails this test
// rather than skipping it (TestNameConnections in dialects/mysql checks
// what is sent).
func TestRunNamesItsConnectionMySQL(t *testing.T) {
	raw := livetest.DSN(t, livetest.MySQL)
	if _, err := gomysql.ParseDSN(raw); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", raw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	var on int
	if err := db.QueryRow("SELECT @@performance_schema").Scan(&on); err != nil {
		t.Fatal(err)
	}
	if on == 0 {
		t.Fatal("performance_schema is off on the server of SCHEDLOCK_TEST_MYSQL_DSN (MariaDB's default), so it does not show connection attributes: start it with --performance-schema=ON, as scripts/test.sh does")
	}
	name := "appname-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	startHolding(t, raw, name)
	var n int
	err = db.QueryRowContext(context.Background(), "SELECT count(*) FROM performance_schema.session_connect_attrs WHERE ATTR_NAME = 'program_name' AND ATTR_VALUE = ?", "schedlock run "+name).Scan(&n)
	if err != nil || n == 0 {
		t.Fatalf("connections with program_name %q: %d (%v)", "schedlock run "+name, n, err)
	}
	assertListedApplication(t, raw, name, "schedlock run "+name)
}

// assertListedApplication checks that `locks ls` lists the session lock
// name held by application app.
func assertListedApplication(t *testing.T, raw, name, app string) {
	t.Helper()
	r := runCmd(t, false, nil, "locks", "ls", "--dsn", raw, "--strategy", "session", "--name", name, "-o", "json")
	if r.err != nil {
		t.Fatal(r.err)
	}
	var entries []struct {
		Name   *string `json:"name"`
		Holder struct {
			Application *string `json:"application"`
		} `json:"holder"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &entries); err != nil {
		t.Fatalf("%v in %s", err, r.stdout)
	}
	if len(entries) != 1 || entries[0].Name == nil || *entries[0].Name != name || entries[0].Holder.Application == nil || *entries[0].Holder.Application != app {
		t.Errorf("locks ls: %s, want %s held by application %q", r.stdout, name, app)
	}
}

// A lock name far longer than a client name may be (9,950 bytes, which
// would push PostgreSQL's startup packet past its 10,000 bytes; 70,000 on
// MySQL, past what a handshake's attributes may carry): run connects, the
// connection is named by the name's start (63 bytes on PostgreSQL) and the
// lock is taken under the whole name.
func TestRunLongLockNameConnects(t *testing.T) {
	for _, s := range liveServers(t) {
		t.Run(s.name, func(t *testing.T) {
			size := 9950
			if s.name == "mysql" {
				size = 70000
			}
			name := "long-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-"
			name += strings.Repeat("n", size-len(name))
			startHolding(t, s.dsn, name)
			locker := sessionLocker(t, s.dsn)
			ctx := context.Background()
			if _, err := locker.Acquire(ctx, name, dialects.Options{AtMost: time.Minute, Owner: "other"}); !errors.Is(err, dialects.ErrHeld) {
				t.Fatalf("acquire of the whole name while run holds it: %v, want held", err)
			}
			if s.name != "postgres" {
				return
			}
			app := "schedlock run " + name[:63-len("schedlock run ")]
			var n int
			err := openPostgres(t, s.dsn).QueryRow(`SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid)
WHERE l.locktype = 'advisory' AND l.granted AND a.application_name = $1`, app).Scan(&n)
			if err != nil || n != 1 {
				t.Fatalf("advisory locks held by sessions named %q: %d (%v), want 1", app, n, err)
			}
			assertListedApplication(t, s.dsn, name, app)
		})
	}
}
