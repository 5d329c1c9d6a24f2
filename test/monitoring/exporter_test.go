//go:build unix

package monitoring

import (
	"database/sql"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/schedlock/schedlock/internal/livetest"
	"github.com/schedlock/schedlock/internal/tcpproxy"
)

// Three live databases and one that does not answer: each lock is
// exported with its state and holder, the unreachable one is up 0 with
// its reason while the others are read, and a database that goes away
// comes back by itself.
func TestExporterLive(t *testing.T) {
	pg := livetest.DSN(t, livetest.Postgres)
	my := livetest.DSN(t, livetest.MySQL)
	// A Redis database of this test's own: the packages that run beside
	// it fill database 0, which the exporter would scan too.
	rd := redisDB(t, livetest.DSN(t, livetest.Redis), 9)
	pgName, pgSession, myName, rdName := uniq("exp-pg"), uniq("exp-pgs"), uniq("exp-my"), uniq("exp-rd")
	runOnce(t, pg, pgName, "--strategy", "table", "--create-table", "--history", "10", "--at-most", "10m")
	hold(t, pg, pgName, "--strategy", "table", "--at-most", "10m")
	hold(t, pg, pgSession, "--strategy", "session")
	// MariaDB lists GET_LOCK locks only with an instrument it ships off
	// (docs/monitoring.md); its lock table needs nothing.
	runOnce(t, my, myName, "--strategy", "table", "--create-table")
	hold(t, my, myName, "--strategy", "table", "--at-most", "10m")
	hold(t, rd, rdName, "--at-most", "10m")

	// PostgreSQL once more, through a proxy the test cuts.
	proxy, err := tcpproxy.Start(pgAddr(t, pg))
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	pgProxied := strings.Replace(pg, pgAddr(t, pg), proxy.Addr(), 1)

	dead := fmt.Sprintf("postgres://nobody:s3cret-pw@127.0.0.1:%d/none?sslmode=disable", freePort(t))
	targets := filepath.Join(t.TempDir(), "targets.yml")
	if err := os.WriteFile(targets, []byte(fmt.Sprintf(`targets:
  - name: pg
    dsn: %q
    labels: {env: test}
  - name: mysql
    dsn: %q
  - name: redis
    dsn: %q
  - name: pg-proxied
    dsn: %q
  - name: dead
    dsn: %q
`, pg, my, rd, pgProxied, dead)), 0o600); err != nil {
		t.Fatal(err)
	}
	e := startExporter(t, "--targets", targets, "--cache", "500ms", "--read-timeout", "5s")

	eventually(t, "every lock held in the exporter", func() (bool, string) {
		mfs := metrics(t, e.URL)
		for dsn, name := range map[string]string{"pg": pgName, "mysql": myName, "redis": rdName, "pg-proxied": pgName, "pg ": pgSession} {
			dsn = strings.TrimSpace(dsn)
			v, ok := value(mfs, "schedlock_lock_state", map[string]string{"dsn": dsn, "lock": name, "state": "held"})
			if !ok || v != 1 {
				up, _ := value(mfs, "schedlock_up", map[string]string{"dsn": dsn})
				return false, fmt.Sprintf("%s: %s not held (%v, %v); its states %v; up %v, scrape errors %v", dsn, name, v, ok,
					labelsOf(mfs, "schedlock_lock_state", map[string]string{"dsn": dsn, "lock": name}), up,
					labelsOf(mfs, "schedlock_scrape_error", map[string]string{"dsn": dsn}))
			}
		}
		return true, ""
	})
	mfs := metrics(t, e.URL)
	for dsn, up := range map[string]float64{"pg": 1, "mysql": 1, "redis": 1, "pg-proxied": 1, "dead": 0} {
		if v, ok := value(mfs, "schedlock_up", map[string]string{"dsn": dsn}); !ok || v != up {
			t.Errorf("schedlock_up{dsn=%q} = %v (%v), want %v", dsn, v, ok, up)
		}
	}
	if v, ok := value(mfs, "schedlock_scrape_error", map[string]string{"dsn": "dead", "reason": "connect"}); !ok || v != 1 {
		t.Errorf("the dead database has no scrape_error{reason=connect}: %v %v", v, ok)
	}
	if v, ok := value(mfs, "schedlock_up", map[string]string{"dsn": "pg", "env": "test"}); !ok || v != 1 {
		t.Error("the targets file's label env=test is not on pg's series")
	}
	// The holders: the table lock's owner is run's host:pid:…, the
	// session lock's the session with run's application name.
	host, _ := os.Hostname()
	if hs := labelsOf(mfs, "schedlock_lock_holder", map[string]string{"dsn": "pg", "lock": pgName}); len(hs) != 1 || !strings.HasPrefix(hs[0]["owner"], host+":") || hs[0]["host"] != host {
		t.Errorf("pg holder %v, want owner %s:pid:… on host %s", hs, host, host)
	}
	if hs := labelsOf(mfs, "schedlock_lock_holder", map[string]string{"dsn": "pg", "lock": pgSession}); len(hs) != 1 || !strings.HasPrefix(hs[0]["owner"], "session ") || !strings.Contains(hs[0]["application"], "schedlock run") {
		t.Errorf("pg session lock holder %v, want a session of schedlock run", hs)
	}
	if hs := labelsOf(mfs, "schedlock_lock_state", map[string]string{"dsn": "pg", "lock": pgSession, "state": "held"}); len(hs) != 1 || hs[0]["source"] != "pg_locks" {
		t.Errorf("pg session lock %v, want it from pg_locks", hs)
	}
	if hs := labelsOf(mfs, "schedlock_lock_holder", map[string]string{"dsn": "mysql", "lock": myName}); len(hs) != 1 || hs[0]["host"] != host {
		t.Errorf("mysql holder %v, want host %s", hs, host)
	}
	if v, ok := value(mfs, "schedlock_lock_lease_remaining_seconds", map[string]string{"dsn": "redis", "lock": rdName}); !ok || v <= 0 || v > 600 {
		t.Errorf("redis lease remaining %v (%v), want within 10m", v, ok)
	}
	if _, ok := value(mfs, "schedlock_lock_last_run_start_timestamp_seconds", map[string]string{"dsn": "pg", "lock": pgName}); !ok {
		t.Error("pg: no last run for a lock with run history")
	}
	if v, ok := value(mfs, "schedlock_lock_fencing_token", map[string]string{"dsn": "pg", "lock": pgName}); !ok || v < 2 {
		t.Errorf("pg fencing token %v (%v), want the second lease's", v, ok)
	}
	if strings.Contains(e.Stderr(), "s3cret-pw") {
		t.Errorf("the password is in the log:\n%s", e.Stderr())
	}
	if n := strings.Count(e.Stderr(), "scrape failed dsn=dead"); n == 0 {
		t.Errorf("no log line for the dead database:\n%s", e.Stderr())
	}

	// The proxied database goes away and comes back.
	proxy.Cut()
	eventually(t, "pg-proxied up 0 while cut", func() (bool, string) {
		v, _ := value(metrics(t, e.URL), "schedlock_up", map[string]string{"dsn": "pg-proxied"})
		return v == 0, fmt.Sprint("up ", v)
	})
	if v, _ := value(metrics(t, e.URL), "schedlock_up", map[string]string{"dsn": "pg"}); v != 1 {
		t.Error("pg went down with the proxied one")
	}
	proxy.Restore()
	eventually(t, "pg-proxied up 1 once restored", func() (bool, string) {
		v, _ := value(metrics(t, e.URL), "schedlock_up", map[string]string{"dsn": "pg-proxied"})
		return v == 1, fmt.Sprint("up ", v)
	})
}

// pgAddr is the host:port of a PostgreSQL URL.
func pgAddr(t *testing.T, dsn string) string {
	t.Helper()
	rest := dsn[strings.Index(dsn, "@")+1:]
	addr := rest[:strings.IndexAny(rest, "/?")]
	if _, _, err := net.SplitHostPort(addr); err != nil {
		t.Fatalf("no host:port in %q", dsn)
	}
	return addr
}

// A user who may not read the lock table: that database is up 0 with the
// reason, the exporter keeps running and the others are exported.
func TestExporterTableNotReadable(t *testing.T) {
	pg := livetest.DSN(t, livetest.Postgres)
	name := uniq("exp-priv")
	runOnce(t, pg, name, "--strategy", "table", "--create-table")
	db, err := sql.Open("pgx", pg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	role := strings.ReplaceAll(uniq("noread"), "-", "_")
	if _, err := db.Exec(fmt.Sprintf(`CREATE ROLE %s LOGIN PASSWORD 'pw-noread'`, role)); err != nil {
		t.Fatal(err)
	}
	defer db.Exec(`DROP ROLE ` + role) //nolint:errcheck
	noread := strings.Replace(pg, "postgres@", role+":pw-noread@", 1)
	if !strings.Contains(noread, role) {
		t.Fatalf("cannot put the role into %q", pg)
	}
	noread += "&x-table=schedlock"
	e := startExporter(t, "--dsn", noread, "--dsn", pg, "--cache", "500ms")
	eventually(t, "the unreadable table's database up 0 with a reason", func() (bool, string) {
		mfs := metrics(t, e.URL)
		reasons := labelsOf(mfs, "schedlock_scrape_error", nil)
		up, _ := value(mfs, "schedlock_up", map[string]string{"dsn": strings.Replace(noread, "pw-noread", "xxxxx", 1)})
		ok := len(reasons) == 1 && reasons[0]["reason"] == "privilege" && up == 0
		return ok, fmt.Sprintf("scrape_error %v, up %v", reasons, up)
	})
	mfs := metrics(t, e.URL)
	if v, _ := value(mfs, "schedlock_lock_state", map[string]string{"lock": name, "state": "expired"}); v != 1 {
		t.Errorf("the readable database's lock %s is not exported as expired", name)
	}
	if !strings.Contains(e.Stderr(), "reason=privilege") {
		t.Errorf("no log line with the reason:\n%s", e.Stderr())
	}
}

// Bad input is refused at start in one line with exit code 2.
func TestExporterBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badHash := write("bad-hash.yml", "basic_auth_users:\n  prometheus: not-a-hash\n")
	noCert := write("no-cert.yml", "tls_server_config:\n  cert_file: "+filepath.Join(dir, "missing.crt")+"\n  key_file: "+filepath.Join(dir, "missing.key")+"\n")
	badLabel := write("bad-label.yml", "targets:\n  - dsn: memory://a\n    labels: {lock: x}\n")
	unknownKey := write("unknown-key.yml", "targets:\n  - dsn: memory://a\n    label: {env: x}\n")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--dsn", "memory://a", "--web.config.file", badHash}, "not a bcrypt hash"},
		{[]string{"--dsn", "memory://a", "--web.config.file", noCert}, "cannot load cert_file"},
		{[]string{"--targets", badLabel}, `the label "lock" is set by the exporter`},
		{[]string{"--targets", unknownKey}, "field label not found"},
		{[]string{"--targets", filepath.Join(dir, "none.yml")}, "no such file"},
		{[]string{"--dsn", "memory://a", "--dsn", "memory://a"}, `two targets are named`},
		{[]string{"--dsn", "memory://a", "--cache", "0s"}, "--cache must be positive"},
		{[]string{"--dsn", "nosuch://x"}, "nosuch"},
	}
	for _, tc := range cases {
		code, stderr := runExporter(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("exporter %v: exit %d, stderr %q; want 2 and one line with %q", tc.args, code, stderr, tc.want)
		}
	}
	// An address already taken: exit 1, one line.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	code, stderr := runExporter(t, "--dsn", "memory://a", "--web.listen-address", l.Addr().String())
	if code != 1 || !strings.Contains(stderr, "address already in use") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("a taken address: exit %d, stderr %q", code, stderr)
	}
}

// redisDB is the Redis DSN dsn with database db instead of its own.
func redisDB(t *testing.T, dsn string, db int) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("the Redis DSN: %v", err)
	}
	u.Path = fmt.Sprintf("/%d", db)
	return u.String()
}
