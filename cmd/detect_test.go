package cmd

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/olekukonko/tablewriter/pkg/twwidth"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
	"github.com/schedlock/schedlock/internal/fakesql"
	"github.com/schedlock/schedlock/internal/golden"
	"github.com/schedlock/schedlock/internal/livetest"
	"github.com/schedlock/schedlock/internal/output"
	"github.com/schedlock/schedlock/internal/testnet"
)

// detectGolden compares got with testdata/name, or rewrites it with
// go test ./cmd -update.
func detectGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got)
}

// sqliteFile returns the path of a new, empty SQLite database (an empty
// file is one).
func sqliteFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "locks.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDetectMissingSQLiteFileCreatesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "typo.db")
	r := runCmd(t, false, nil, "detect", "--dsn", path)
	var usage *UsageError
	if r.err == nil || errors.As(r.err, &usage) || !strings.Contains(r.err.Error(), "does not exist") {
		t.Fatalf("err = %v, want a runtime error saying the file does not exist", r.err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("detect created %s", path)
	}
}

// stubServer answers the session-lock statements of stubOps like
// CockroachDB's pg_try_advisory_lock: every try is granted.
type stubServer struct{}

func (stubServer) Handle(_ *fakesql.Session, query string, _ []driver.NamedValue) (fakesql.Response, error) {
	return fakesql.Response{Columns: []string{"ok"}, Rows: [][]any{{true}}}, nil
}

func (stubServer) Close(*fakesql.Session) {}

type stubOps struct{}

func (stubOps) ask(ctx context.Context, c *sql.Conn, stmt, name string) (bool, error) {
	var ok bool
	err := c.QueryRowContext(ctx, stmt, name).Scan(&ok)
	return ok, err
}

func (o stubOps) TryLock(ctx context.Context, c *sql.Conn, name string) (bool, error) {
	return o.ask(ctx, c, "SELECT try_lock(?)", name)
}

func (o stubOps) Unlock(ctx context.Context, c *sql.Conn, name string) (bool, error) {
	return o.ask(ctx, c, "SELECT unlock(?)", name)
}

func (o stubOps) Holds(ctx context.Context, c *sql.Conn, name string) (bool, error) {
	return o.ask(ctx, c, "SELECT holds(?)", name)
}

// stubEngine is the engine of a fake CockroachDB-like database whose
// session lock function grants every request.
type stubEngine struct{ db *sql.DB }

func (stubEngine) NewTableLocker(dialects.Table) (dialects.TableLocker, error) {
	return nil, dialects.ErrUnsupported
}

func (stubEngine) RecommendStrategy() (dialects.Strategy, string) {
	return dialects.StrategySession, "advisory locks are freed when the holder's connection ends"
}

func (e stubEngine) NewSessionLocker(dialects.SessionNames) (dialects.Locker, error) {
	return &sqlkit.SessionLocker{Dialect: "fake", DB: e.db, Ops: stubOps{}}, nil
}

func (stubEngine) ProbeDialect(context.Context, dialects.ProbeOptions) (dialects.Capabilities, error) {
	return dialects.Capabilities{
		SkipLocked:   dialects.CapYes("proved: a row locked by another connection was skipped"),
		NoWait:       dialects.CapYes("by version: FakeDB 24.3 (NOWAIT since 20.2)"),
		Isolation:    dialects.CapYes("serializable"),
		LockListing:  dialects.CapNo("FakeDB has no real advisory locks to list", "").Fixed(dialects.UseTableStrategy, ": "+string(dialects.TermListLocks)+" lists the lease table"),
		KillSessions: dialects.CapNo("app may end only its own sessions", "GRANT admin TO app"),
		Clock: dialects.Clock{
			Skew: 12 * time.Millisecond, RoundTrip: 412 * time.Microsecond, Measured: true,
			Server: time.Date(2026, 11, 30, 5, 20, 58, 183e6, time.UTC),
		},
		MissingPrivileges: []dialects.MissingPrivilege{{
			Privilege: `CREATE on schema "jobs"`,
			NeededFor: "the table strategy creating its lock table",
			Grant:     `GRANT CREATE ON SCHEMA "jobs" TO "app"`,
		}},
	}, nil
}

// stubReport probes a fake CockroachDB-like database whose session lock
// function grants every request, through the real DB.Probe, with a fixed
// clock reading, so every field is deterministic.
func stubReport(t *testing.T) *detectReport {
	t.Helper()
	sqlDB, _ := fakesql.Open(stubServer{})
	t.Cleanup(func() { _ = sqlDB.Close() })
	info := dialects.Info{Dialect: "fake", Product: "fakedb", Version: "v24.3.0", Banner: "FakeDB CCL v24.3.0 (x86_64-pc-linux-gnu)"}
	db := sqlkit.New(sqlDB, info, nil, stubEngine{sqlDB})
	caps, err := db.Probe(context.Background(), dialects.ProbeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return newDetectReport("postgres://app:xxxxx@crdb1:26257/jobs", info, caps)
}

func TestDetectStubGolden(t *testing.T) {
	r := stubReport(t)
	if r.Capabilities.SessionLocks.Status != dialects.StatusStub {
		t.Fatalf("session locks %+v, want a stub", r.Capabilities.SessionLocks)
	}
	if r.Recommended.LockStrategy != dialects.StrategyTable {
		t.Errorf("lock strategy %s on a stub, want table", r.Recommended.LockStrategy)
	}
	for _, tc := range []struct {
		file       string
		format     output.Format
		tty, color bool
		width      int
	}{
		{"detect_stub.tsv.golden", output.Table, false, false, 80},
		{"detect_stub.tty.golden", output.Table, true, false, 0},
		{"detect_stub.tty80.golden", output.Table, true, false, 80},
		{"detect_stub.color.golden", output.Table, true, true, 0},
		{"detect_stub.json.golden", output.JSON, false, false, 0},
		{"detect_stub.yaml.golden", output.YAML, false, false, 0},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var buf bytes.Buffer
			if err := writeDetect(&buf, r, tc.format, tc.tty, tc.color, tc.width); err != nil {
				t.Fatal(err)
			}
			detectGolden(t, tc.file, buf.Bytes())
			if tc.tty && tc.width > 0 {
				for _, line := range strings.Split(strings.TrimRight(buf.String(), "\n"), "\n") {
					if w := twwidth.Width(line); w > tc.width {
						t.Errorf("line of %d columns on a %d-column terminal: %q", w, tc.width, line)
					}
				}
			}
		})
	}
}

// detectDoc is the part of the JSON document the tests read.
type detectDoc struct {
	Target       string `json:"target"`
	Product      string `json:"product"`
	Version      string `json:"version"`
	Capabilities map[string]struct {
		Supported *bool   `json:"supported"`
		Status    string  `json:"status"`
		Detail    *string `json:"detail"`
		Remedy    *string `json:"remedy"`
	} `json:"capabilities"`
	ClockSkewMS       *float64                    `json:"clock_skew_ms"`
	MissingPrivileges []dialects.MissingPrivilege `json:"missing_privileges"`
	Recommended       struct {
		LockStrategy  string `json:"lock_strategy"`
		ClaimStrategy string `json:"claim_strategy"`
		Reason        string `json:"reason"`
	} `json:"recommended"`
}

// documentedFields are the top-level JSON fields docs/detect.md promises.
var documentedFields = []string{
	"target", "product", "version", "variant", "mode", "dialect", "banner", "capabilities",
	"clock_skew_ms", "clock_round_trip_ms", "server_time", "clock_detail", "missing_privileges", "recommended",
}

var capabilityKeys = []string{"session_locks", "skip_locked", "nowait", "isolation", "lock_listing", "kill_sessions"}

// runDetectJSON runs detect -o json on dsn and checks every documented
// field is present.
func runDetectJSON(t *testing.T, dsn string, extra ...string) detectDoc {
	t.Helper()
	r := runCmd(t, false, nil, append([]string{"detect", "--dsn", dsn, "-o", "json"}, extra...)...)
	if r.err != nil {
		t.Fatalf("%v\nstderr: %s", r.err, r.stderr)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.stdout), &fields); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
	}
	for _, f := range documentedFields {
		if _, ok := fields[f]; !ok {
			t.Errorf("JSON lacks %q:\n%s", f, r.stdout)
		}
	}
	var doc detectDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range capabilityKeys {
		c, ok := doc.Capabilities[k]
		if !ok || c.Supported == nil || c.Status == "" || c.Detail == nil || c.Remedy == nil {
			t.Errorf("capabilities.%s is incomplete: %+v", k, c)
		}
	}
	if doc.MissingPrivileges == nil {
		t.Errorf("missing_privileges is not a list:\n%s", r.stdout)
	}
	if doc.Recommended.Reason == "" || doc.Recommended.LockStrategy == "" || doc.Recommended.ClaimStrategy == "" {
		t.Errorf("recommended is incomplete: %+v", doc.Recommended)
	}
	return doc
}

func TestDetectSQLiteJSON(t *testing.T) {
	path := sqliteFile(t)
	doc := runDetectJSON(t, path)
	if doc.Product != "sqlite" || doc.Version == "" || doc.Target != path {
		t.Errorf("product %q version %q target %q", doc.Product, doc.Version, doc.Target)
	}
	if c := doc.Capabilities["session_locks"]; *c.Supported || c.Status != "no" {
		t.Errorf("session_locks %+v on SQLite, want no", c)
	}
	if doc.Recommended.LockStrategy != "table" || doc.Recommended.ClaimStrategy != "optimistic" {
		t.Errorf("recommended %+v, want table / optimistic", doc.Recommended)
	}
	if doc.ClockSkewMS == nil || *doc.ClockSkewMS <= -1000 || *doc.ClockSkewMS >= 1000 {
		t.Errorf("clock_skew_ms %v, want |skew| < 1000 on the same host", doc.ClockSkewMS)
	}
	if len(doc.MissingPrivileges) != 0 {
		t.Errorf("missing privileges on a fresh file: %+v", doc.MissingPrivileges)
	}
}

// TestDetectSQLiteStableFieldsGolden compares the JSON of a real SQLite
// run with its golden file, after masking what changes between runs and
// builds (path, SQLite version, clock figures).
func TestDetectSQLiteStableFieldsGolden(t *testing.T) {
	path := sqliteFile(t)
	r := runCmd(t, false, nil, "detect", "--dsn", path, "-o", "json")
	if r.err != nil {
		t.Fatal(r.err)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	for _, volatile := range []string{"target", "version", "banner", "clock_skew_ms", "clock_round_trip_ms", "server_time"} {
		if doc[volatile] == nil || doc[volatile] == "" {
			t.Errorf("%s is empty on SQLite", volatile)
		}
		doc[volatile] = "<" + volatile + ">"
	}
	var buf bytes.Buffer
	if err := output.WriteJSON(&buf, doc); err != nil {
		t.Fatal(err)
	}
	detectGolden(t, "detect_sqlite.json.golden", buf.Bytes())
}

func TestDetectTable(t *testing.T) {
	for _, tty := range []bool{false, true} {
		t.Run(map[bool]string{false: "piped", true: "tty"}[tty], func(t *testing.T) {
			path := sqliteFile(t)
			r := runCmd(t, tty, nil, "detect", "--dsn", path)
			if r.err != nil {
				t.Fatalf("%v\n%s", r.err, r.stderr)
			}
			if tty {
				if !strings.Contains(r.stdout, "┌") || !strings.Contains(r.stdout, "\x1b[31mno") {
					t.Errorf("terminal output is not a boxed, coloured table:\n%s", r.stdout)
				}
				if !strings.Contains(r.stderr, "probing "+path) || !strings.HasSuffix(r.stderr, "\r\x1b[K") {
					t.Errorf("no cleared progress line on a terminal's stderr: %q", r.stderr)
				}
				return
			}
			if strings.Contains(r.stdout, "┌") || strings.Contains(r.stdout, "\x1b[") || r.stderr != "" {
				t.Errorf("piped output has box drawing, colour or stderr noise:\n%s\nstderr %q", r.stdout, r.stderr)
			}
			for _, line := range []string{
				"FIELD\tVALUE\tDETAIL\n",
				"\nproduct\tsqlite\t",
				"\ncapabilities.session_locks\tno\t",
				"\ncapabilities.isolation\tserializable\t",
				"\nmissing_privileges\tnone\t",
				"\nrecommended.lock_strategy\ttable\t",
				"\nrecommended.claim_strategy\toptimistic\t",
			} {
				if !strings.Contains(r.stdout, line) {
					t.Errorf("piped output lacks %q:\n%s", line, r.stdout)
				}
			}
		})
	}
}

func TestDetectNoColor(t *testing.T) {
	path := sqliteFile(t)
	r := runCmd(t, true, nil, "detect", "--no-color", "--dsn", path)
	if r.err != nil || strings.Contains(r.stdout, "\x1b[") {
		t.Errorf("--no-color still colours (err %v):\n%q", r.err, r.stdout)
	}
}

func TestDetectQuietHasNoProgress(t *testing.T) {
	r := runCmd(t, true, nil, "detect", "-q", "--dsn", sqliteFile(t))
	if r.err != nil || r.stderr != "" {
		t.Errorf("-q on a terminal: err %v, stderr %q", r.err, r.stderr)
	}
}

func TestDetectYAML(t *testing.T) {
	r := runCmd(t, false, nil, "detect", "--dsn", sqliteFile(t), "-o", "yaml")
	if r.err != nil {
		t.Fatal(r.err)
	}
	for _, key := range []string{"product: sqlite\n", "capabilities:\n  session_locks:\n    supported: false\n", "missing_privileges: []\n", "  lock_strategy: table\n"} {
		if !strings.Contains(r.stdout, key) {
			t.Errorf("YAML lacks %q:\n%s", key, r.stdout)
		}
	}
}

func TestDetectUsageErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"xml", []string{"detect", "--dsn", "x.db", "-o", "xml"}, nil, `unknown output format "xml": use one of table, json, yaml`},
		{"markdown is selfcheck's", []string{"detect", "--dsn", "x.db", "-o", "markdown"}, nil, "use one of table, json, yaml"},
		{"no dsn", []string{"detect"}, nil, "no database given"},
		{"bad dsn", []string{"detect", "--dsn", "nosuch://h/db"}, nil, `unknown scheme "nosuch"`},
		{"bad dsn from env", []string{"detect"}, map[string]string{EnvDSN: "nosuch://h/db"}, "$SCHEDLOCK_DSN"},
		{"argument", []string{"detect", "extra"}, nil, `unknown command "extra"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runCmd(t, false, tc.env, tc.args...)
			var usage *UsageError
			if !errors.As(r.err, &usage) {
				t.Fatalf("error %v (%T) is not a usage error (exit 2)", r.err, r.err)
			}
			if !strings.Contains(r.err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", r.err, tc.want)
			}
			if r.stdout != "" {
				t.Errorf("stdout not empty: %q", r.stdout)
			}
		})
	}
}

func TestDetectUnreachableIsRuntimeError(t *testing.T) {
	r := runCmd(t, false, nil, "detect", "--dsn", "postgres://app:"+url.QueryEscape(secret)+"@"+testnet.FreeAddr(t)+"/jobs?sslmode=disable")
	var usage *UsageError
	if r.err == nil || errors.As(r.err, &usage) {
		t.Fatalf("err = %v, want a runtime error (exit 1)", r.err)
	}
	if !strings.Contains(r.err.Error(), "connection refused") {
		t.Errorf("error %q does not say the connection was refused", r.err)
	}
	assertRunHidden(t, r)
}

func TestDetectHelpHasExamples(t *testing.T) {
	r := runCmd(t, false, nil, "detect", "--help")
	if r.err != nil {
		t.Fatal(r.err)
	}
	for _, want := range []string{"Examples:", "schedlock detect --dsn", "--read-only", "Exit codes:"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("help lacks %q:\n%s", want, r.stdout)
		}
	}
	// detect has no default database: every example names one.
	_, examples, _ := strings.Cut(r.stdout, "Examples:")
	examples, _, _ = strings.Cut(examples, "Flags:")
	for _, line := range strings.Split(examples, "\n") {
		if strings.Contains(line, "schedlock detect") && !strings.Contains(line, "--dsn") && !strings.Contains(line, EnvDSN+"=") && !strings.Contains(line, EnvDatabaseURL+"=") {
			t.Errorf("example without a DSN: %q", strings.TrimSpace(line))
		}
	}
}

func TestDetectLivePostgres(t *testing.T) {
	raw := livetest.DSN(t, livetest.Postgres)
	// Trust authentication accepts any password; it must never be shown.
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), secret)
	dsn := u.String()
	r := runCmd(t, false, nil, "detect", "--dsn", dsn, "-o", "json")
	assertRunHidden(t, r)
	doc := runDetectJSON(t, dsn)
	if doc.Product != "postgresql" || doc.Version == "" {
		t.Errorf("product %q version %q", doc.Product, doc.Version)
	}
	if !strings.Contains(doc.Target, "xxxxx") {
		t.Errorf("target %q is not the redacted DSN", doc.Target)
	}
	for _, k := range []string{"session_locks", "skip_locked", "nowait"} {
		if c := doc.Capabilities[k]; !*c.Supported || !strings.HasPrefix(*c.Detail, "proved:") {
			t.Errorf("%s = %+v on PostgreSQL, want proved yes", k, c)
		}
	}
	if doc.Recommended.LockStrategy != "session" || doc.Recommended.ClaimStrategy != "skip-locked" {
		t.Errorf("recommended %+v, want session / skip-locked", doc.Recommended)
	}
	if doc.ClockSkewMS == nil || *doc.ClockSkewMS <= -1000 || *doc.ClockSkewMS >= 1000 {
		t.Errorf("clock_skew_ms %v, want |skew| < 1000 on the same host", doc.ClockSkewMS)
	}
	ro := runDetectJSON(t, raw, "--read-only")
	if c := ro.Capabilities["skip_locked"]; !strings.Contains(*c.Detail, "--read-only") {
		t.Errorf("--read-only skip_locked detail %q", *c.Detail)
	}
}

func TestDetectLiveMySQL(t *testing.T) {
	raw := livetest.DSN(t, livetest.MySQL)
	doc := runDetectJSON(t, raw)
	if doc.Product != "mariadb" && doc.Product != "mysql" {
		t.Fatalf("product %q", doc.Product)
	}
	if c := doc.Capabilities["session_locks"]; !*c.Supported || !strings.HasPrefix(*c.Detail, "proved:") {
		t.Errorf("session_locks = %+v, want proved yes", c)
	}
	if doc.Recommended.LockStrategy != "session" {
		t.Errorf("lock strategy %q, want session", doc.Recommended.LockStrategy)
	}
	if doc.ClockSkewMS == nil || *doc.ClockSkewMS <= -1000 || *doc.ClockSkewMS >= 1000 {
		t.Errorf("clock_skew_ms %v, want |skew| < 1000 on the same host", doc.ClockSkewMS)
	}
	skip := doc.Capabilities["skip_locked"]
	if doc.Product == "mariadb" && strings.HasPrefix(doc.Version, "10.11") {
		if !*skip.Supported || !strings.HasPrefix(*skip.Detail, "proved:") || doc.Recommended.ClaimStrategy != "skip-locked" {
			t.Errorf("MariaDB 10.11: skip_locked %+v, claim %q; want proved yes, skip-locked", skip, doc.Recommended.ClaimStrategy)
		}
	}
	if *skip.Supported != (doc.Recommended.ClaimStrategy == "skip-locked") {
		t.Errorf("claim strategy %q does not follow skip_locked %v", doc.Recommended.ClaimStrategy, *skip.Supported)
	}
}
