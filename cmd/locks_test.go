package cmd

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/olekukonko/tablewriter/pkg/twwidth"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlite"
	"github.com/schedlock/schedlock/internal/golden"
	"github.com/schedlock/schedlock/internal/iostreams"
	"github.com/schedlock/schedlock/internal/output"
)

// goldenFile compares got with testdata/name, or rewrites it with
// go test ./cmd -update.
func goldenFile(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got)
}

// sampleLocks is one of every kind of listed lock, at fixed times.
func sampleLocks() []dialects.LockEntry {
	now := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	return []dialects.LockEntry{
		{
			Key: "4097083626", Tool: dialects.ToolGoose, State: dialects.StateHeld, Strategy: dialects.StrategySession, Source: "pg_locks", DBNow: now,
			Holder: &dialects.Holder{SessionID: "31337", User: "migrator", Client: "10.0.0.9", Application: "goose", Since: now.Add(-3 * time.Minute)},
		},
		{
			Name: "dead-job", State: dialects.StateExpired, Owner: "host-b", Strategy: dialects.StrategyTable, Source: "shedlock", Preset: dialects.PresetShedlock,
			LockedAt: now.Add(-35 * time.Minute), Until: now.Add(-5 * time.Minute), DBNow: now,
		},
		{
			Name: "liquibase", State: dialects.StateHeld, Owner: "build-7 (10.0.0.5)", Strategy: dialects.StrategyTable, Source: "DATABASECHANGELOGLOCK", Preset: dialects.PresetLiquibase,
			LockedAt: now.Add(-2 * time.Hour), DBNow: now,
		},
		{
			Name: "nightly-report", Key: "7440995589958059143", State: dialects.StateHeld, Strategy: dialects.StrategySession, Source: "pg_locks", DBNow: now,
			Holder: &dialects.Holder{SessionID: "4242", User: "app", Client: "local", Application: "reports", Since: now.Add(-90 * time.Second)},
		},
		{
			Name: "nightly-report", Key: "7440995589958059143", State: dialects.StateWaiting, Strategy: dialects.StrategySession, Source: "pg_locks", DBNow: now,
			Holder: &dialects.Holder{SessionID: "4243", User: "app", Client: "10.0.0.8"},
		},
		{
			Name: "sync", State: dialects.StateHeld, Owner: "web-3:4711:9f1c2a7b", Token: 17, HasToken: true, Strategy: dialects.StrategyTable, Source: "schedlock", Preset: dialects.PresetSchedlock,
			LockedAt: now.Add(-1500 * time.Millisecond), Until: now.Add(28*time.Minute + 30*time.Second), DBNow: now,
		},
		{
			Name: "zombie-job", State: dialects.StateStale, Owner: "web-3:4711:9f1c2a7b;hb=10m/30m", Token: 12, HasToken: true,
			Strategy: dialects.StrategyTable, Source: "schedlock", Preset: dialects.PresetSchedlock,
			LockedAt: now.Add(-40 * time.Minute), Until: now.Add(5 * time.Minute), DBNow: now,
			StaleReason: "no refresh for 25m0s, due every 10m", LastRefresh: now.Add(-25 * time.Minute), RefreshEvery: 10 * time.Minute,
		},
	}
}

func TestWriteLocksGolden(t *testing.T) {
	cases := []struct {
		file       string
		format     output.Format
		tty, color bool
		width      int
	}{
		{"locks.tsv.golden", output.Table, false, false, 80},
		{"locks.tty.golden", output.Table, true, false, 0},
		{"locks.tty80.golden", output.Table, true, false, 80},
		{"locks.tty120.golden", output.Table, true, true, 120},
		{"locks.color.golden", output.Table, true, true, 0},
		{"locks.json.golden", output.JSON, false, false, 0},
		{"locks.yaml.golden", output.YAML, false, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			var buf bytes.Buffer
			if err := writeLocks(&buf, sampleLocks(), tc.format, tc.tty, tc.color, tc.width); err != nil {
				t.Fatal(err)
			}
			goldenFile(t, tc.file, buf.Bytes())
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

// On a terminal of any width the key of a lock without a name stays, on
// one line (it is what `unlock --key` takes); once every lock has a name
// the key is among the first columns to go.
func TestLocksTerminalKeepsTheKeyOfUnnamedLocks(t *testing.T) {
	named := slices.DeleteFunc(sampleLocks(), func(e dialects.LockEntry) bool { return e.Name == "" })
	for _, width := range []int{80, 100, 120, 160} {
		var buf bytes.Buffer
		if err := writeLocks(&buf, sampleLocks(), output.Table, true, false, width); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), "│ 4097083626 ") {
			t.Errorf("width %d: the unnamed lock's key is missing:\n%s", width, buf.String())
		}
		buf.Reset()
		if err := writeLocks(&buf, named, output.Table, true, false, width); err != nil {
			t.Fatal(err)
		}
		if width == 80 && strings.Contains(buf.String(), "KEY") {
			t.Errorf("width %d: KEY kept though every lock has a name:\n%s", width, buf.String())
		}
	}
}

func TestWriteLocksEmpty(t *testing.T) {
	cases := []struct {
		format output.Format
		tty    bool
		want   string
	}{
		{output.JSON, false, "[]\n"},
		{output.YAML, false, "[]\n"},
		{output.Table, false, "name\tkey\tstate\towner\ttoken\tsession_id\tuser\tclient\tapplication\tsince\tlocked_at\tlock_until\tage_seconds\tstrategy\tpreset\tsource\tnamespace\ttool\tlast_run_started_at\tlast_run_duration_ms\tlast_run_at_most_ms\tlast_run_exit_code\tstale_reason\tlast_refresh\tschedule\tsuccess_due\tmissed\n"},
		{output.Table, true, "No locks found (free locks are shown with --all).\n"},
	}
	for _, tc := range cases {
		var buf bytes.Buffer
		if err := writeLocks(&buf, []dialects.LockEntry{}, tc.format, tc.tty, false, 80); err != nil {
			t.Fatal(err)
		}
		if buf.String() != tc.want {
			t.Errorf("%s tty=%v: %q, want %q", tc.format, tc.tty, buf.String(), tc.want)
		}
	}
}

// cmdResult is what one command run produced.
type cmdResult struct {
	stdout, stderr string
	err            error
}

// runWithInput runs schedlock with args on in-memory streams whose input
// holds stdin; tty sets every stream's terminal flag.
func runWithInput(t *testing.T, tty bool, stdin string, args ...string) cmdResult {
	t.Helper()
	ios, in, out, errOut := iostreams.Test()
	in.WriteString(stdin)
	ios.SetStdinTTY(tty)
	ios.SetStdoutTTY(tty)
	ios.SetStderrTTY(tty)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := Execute(ctx, testFactory(ios, map[string]string{}, t.TempDir()), args)
	return cmdResult{stdout: out.String(), stderr: errOut.String(), err: err}
}

// lockFile is a SQLite file with ShedLock's table, filled as ShedLock
// fills it: held-job held by host-a for 10 more minutes, dead-job's lease
// over 5 minutes ago, and Liquibase's lock held by build-7.
func lockFile(t *testing.T) (string, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "locks.db")
	db, err := sql.Open(sqlite.DriverName, sqlite.DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	for _, s := range []string{
		`CREATE TABLE shedlock (name VARCHAR(64) NOT NULL PRIMARY KEY, lock_until TIMESTAMP NOT NULL, locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL)`,
		`INSERT INTO shedlock VALUES ('held-job', strftime('%Y-%m-%d %H:%M:%f', 'now', '+10 minutes'), strftime('%Y-%m-%d %H:%M:%f', 'now', '-1 minutes'), 'host-a')`,
		`INSERT INTO shedlock VALUES ('dead-job', strftime('%Y-%m-%d %H:%M:%f', 'now', '-5 minutes'), strftime('%Y-%m-%d %H:%M:%f', 'now', '-35 minutes'), 'host-b')`,
		`CREATE TABLE DATABASECHANGELOGLOCK (ID INTEGER NOT NULL PRIMARY KEY, LOCKED BOOLEAN NOT NULL, LOCKGRANTED DATETIME, LOCKEDBY VARCHAR(255))`,
		`INSERT INTO DATABASECHANGELOGLOCK VALUES (1, 1, CURRENT_TIMESTAMP, 'build-7 (10.0.0.5)')`,
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return path, db
}

func TestLocksLsPiped(t *testing.T) {
	path, _ := lockFile(t)
	r := runWithInput(t, false, "", "locks", "ls", "--dsn", path)
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.stderr)
	}
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "name\tkey\tstate\towner\t") {
		t.Fatalf("piped output:\n%s", r.stdout)
	}
	want := map[string]string{"dead-job": "expired\thost-b", "held-job": "held\thost-a", "liquibase": "held\tbuild-7 (10.0.0.5)"}
	for _, l := range lines[1:] {
		f := strings.Split(l, "\t")
		if len(f) != 27 {
			t.Fatalf("row has %d fields: %q", len(f), l)
		}
		if got := f[2] + "\t" + f[3]; got != want[f[0]] {
			t.Errorf("%s: state and owner %q, want %q", f[0], got, want[f[0]])
		}
		if strings.Contains(l, "\x1b[") {
			t.Errorf("colour when piped: %q", l)
		}
	}
	if r.stderr != "schedlock: note: lock tables keep the owner when a lock is released, so released and expired rows both show as expired\n" {
		t.Errorf("stderr %q", r.stderr)
	}
	quiet := runWithInput(t, false, "", "locks", "ls", "--dsn", path, "--quiet")
	if quiet.err != nil || quiet.stderr != "" || strings.Count(quiet.stdout, "\n") != 4 {
		t.Errorf("--quiet: err %v, stderr %q", quiet.err, quiet.stderr)
	}
}

func TestLocksLsTerminal(t *testing.T) {
	path, _ := lockFile(t)
	r := runWithInput(t, true, "", "locks", "ls", "--dsn", path, "--name", "*-job")
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.stderr)
	}
	for _, s := range []string{"┌", "NAME", "STATE", "OWNER / HOLDER", "held-job", "dead-job", "(in ", "LOCKED AT (UTC)", "\x1b[32mheld\x1b[0m", "shedlock"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("terminal table lacks %q:\n%s", s, r.stdout)
		}
	}
	// The row was locked 5 minutes before the listing; a slow machine may
	// show some seconds more.
	if !regexp.MustCompile(`\(5m(\d+s)? ago\)`).MatchString(r.stdout) {
		t.Errorf("terminal table lacks the age of a row locked 5m ago:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, "liquibase") || strings.Contains(r.stdout, "KEY") {
		t.Errorf("--name '*-job' shows liquibase, or a key column without keys:\n%s", r.stdout)
	}
	empty := runWithInput(t, true, "", "locks", "ls", "--dsn", path, "--state", "waiting")
	if empty.err != nil || empty.stdout != "No locks found (free locks are shown with --all).\n" {
		t.Errorf("empty listing on a terminal: %v %q", empty.err, empty.stdout)
	}
}

func TestLocksLsJSON(t *testing.T) {
	path, db := lockFile(t)
	if _, err := db.Exec(`UPDATE DATABASECHANGELOGLOCK SET LOCKED = 0, LOCKEDBY = NULL, LOCKGRANTED = NULL`); err != nil {
		t.Fatal(err)
	}
	r := runWithInput(t, false, "", "locks", "ls", "--dsn", path, "-o", "json", "--all")
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.stderr)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("not a JSON array: %v\n%s", err, r.stdout)
	}
	if len(got) != 3 {
		t.Fatalf("want dead-job, held-job and the free liquibase lock, got %d:\n%s", len(got), r.stdout)
	}
	for _, o := range got {
		for _, k := range []string{"name", "key", "state", "owner", "locked_at", "lock_until", "source", "holder", "strategy", "age_seconds"} {
			if _, ok := o[k]; !ok {
				t.Errorf("%v lacks %q", o["name"], k)
			}
		}
		holder, ok := o["holder"].(map[string]any)
		if !ok {
			t.Fatalf("holder is not an object: %v", o["holder"])
		}
		for _, k := range []string{"session_id", "user", "client", "application", "since"} {
			if v, ok := holder[k]; !ok || v != nil {
				t.Errorf("%v: holder.%s = %v, want null for a table lock", o["name"], k, v)
			}
		}
	}
	held := got[1]
	if held["name"] != "held-job" || held["state"] != "held" || held["owner"] != "host-a" || held["source"] != "shedlock" || held["key"] != nil {
		t.Errorf("held-job: %v", held)
	}
	for _, k := range []string{"locked_at", "lock_until"} {
		ts, _ := held[k].(string)
		if p, err := time.Parse(time.RFC3339Nano, ts); err != nil || !strings.HasSuffix(ts, "Z") || p.IsZero() {
			t.Errorf("%s = %q is not RFC 3339 UTC", k, ts)
		}
	}
	if free := got[2]; free["name"] != "liquibase" || free["state"] != "free" || free["owner"] != nil || free["locked_at"] != nil {
		t.Errorf("free liquibase lock: %v", free)
	}
	none := runWithInput(t, false, "", "locks", "ls", "--dsn", path, "-o", "json", "--name", "nothing-*")
	if none.err != nil || none.stdout != "[]\n" {
		t.Errorf("empty JSON listing: %v %q", none.err, none.stdout)
	}
}

// listingsWriter is a command's stdout that counts listings by a marker
// line and closes reached once it has seen want of them.
type listingsWriter struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	marker  string
	want    int
	reached chan struct{}
}

func newListingsWriter(marker string, want int) *listingsWriter {
	return &listingsWriter{marker: marker, want: want, reached: make(chan struct{})}
}

func (w *listingsWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := strings.Count(w.buf.String(), w.marker)
	n, err := w.buf.Write(p)
	if now := strings.Count(w.buf.String(), w.marker); had < w.want && now >= w.want {
		close(w.reached)
	}
	return n, err
}

func (w *listingsWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// The watch lists again and again until its context ends (Ctrl-C), which is
// a normal end. The test waits for the listings themselves, however slow
// the machine, and only then cancels.
func TestLocksLsWatch(t *testing.T) {
	path, _ := lockFile(t)
	for _, tty := range []bool{false, true} {
		marker := "name\tkey\tstate"
		if tty {
			marker = "Every 100ms: schedlock locks ls"
		}
		out := newListingsWriter(marker, 2)
		ios, _, _, _ := iostreams.Test()
		ios.Out = out
		ios.SetStdinTTY(tty)
		ios.SetStdoutTTY(tty)
		ios.SetStderrTTY(tty)
		ctx, cancel := context.WithCancel(context.Background())
		ended := make(chan error, 1)
		go func() {
			ended <- Execute(ctx, testFactory(ios, map[string]string{}, t.TempDir()), []string{"locks", "ls", "--dsn", path, "--watch", "100ms", "--quiet"})
		}()
		select {
		case <-out.reached:
		case err := <-ended:
			cancel()
			t.Fatalf("tty=%v: the watch ended by itself (%v) after:\n%s", tty, err, out.String())
		case <-time.After(time.Minute):
			cancel()
			t.Fatalf("tty=%v: fewer than 2 listings in a minute at --watch 100ms:\n%s", tty, out.String())
		}
		cancel() // as Ctrl-C does
		select {
		case err := <-ended:
			if err != nil {
				t.Fatalf("tty=%v: a watch ended by its context is a normal end, got %v", tty, err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("tty=%v: the watch still runs a minute after its context ended", tty)
		}
		if clear := strings.Contains(out.String(), "\x1b[H\x1b[2J"); clear != tty {
			t.Errorf("tty=%v: screen cleared = %v", tty, clear)
		}
	}
	// --timeout ends a watch the same way. 3s is far more than connecting
	// to a SQLite file takes, so the deadline falls in the watch.
	r := runWithInput(t, false, "", "locks", "ls", "--dsn", path, "--watch", "100ms", "--timeout", "3s", "--quiet")
	if r.err != nil {
		t.Fatalf("a watch ended by --timeout is a normal end, got %v", r.err)
	}
	if !strings.Contains(r.stdout, "name\tkey\tstate") {
		t.Errorf("no listing in 3s at --watch 100ms:\n%s", r.stdout)
	}
}

func TestLocksLsBadInput(t *testing.T) {
	path, db := lockFile(t)
	if _, err := db.Exec(`CREATE TABLE job_lock (id INTEGER PRIMARY KEY, payload TEXT)`); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"unknown preset", []string{"--preset", "quartz"}, []string{`unknown preset "quartz": use one of schedlock, shedlock, sys_sched_lock, liquibase`}},
		{"wrong shape", []string{"--table", "job_lock", "--preset", "shedlock"}, []string{"table job_lock is not a shedlock table", "expected columns name, lock_until, locked_at, locked_by", "missing name, lock_until, locked_at, locked_by", "it has id, payload"}},
		{"no layout", []string{"--table", "job_lock"}, []string{"matches no lock-table layout", "schedlock (name, lock_until, locked_at, locked_by, token)"}},
		{"missing table", []string{"--table", "nope"}, []string{"table nope does not exist"}},
		{"bad table name", []string{"--table", "a;b"}, []string{"not a plain identifier"}},
		{"bad state", []string{"--state", "zombie"}, []string{`unknown lock state "zombie"`}},
		{"bad strategy", []string{"--strategy", "advisory"}, []string{`unknown strategy "advisory": use session or table`}},
		{"bad glob", []string{"--name", "[abc"}, []string{`bad --name pattern "[abc"`}},
		{"short watch", []string{"--watch", "1ms"}, []string{"--watch must be at least 100ms"}},
		{"xml", []string{"-o", "xml"}, []string{`unknown output format "xml": use one of table, json, yaml`}},
		{"stray argument", []string{"extra"}, []string{`unknown command "extra"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runWithInput(t, false, "", append([]string{"locks", "ls", "--dsn", path}, tc.args...)...)
			var usage *UsageError
			if !errors.As(r.err, &usage) {
				t.Fatalf("error %v (%T) is not a usage error", r.err, r.err)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.err.Error(), w) {
					t.Errorf("error %q does not say %q", r.err, w)
				}
			}
			if r.stdout != "" {
				t.Errorf("stdout %q", r.stdout)
			}
		})
	}
	r := runWithInput(t, false, "", "locks", "ls")
	var usage *UsageError
	if !errors.As(r.err, &usage) || !strings.Contains(r.err.Error(), "no database given") {
		t.Errorf("no DSN: %v", r.err)
	}
	r = runWithInput(t, false, "", "locks")
	if !errors.As(r.err, &usage) || !strings.Contains(r.err.Error(), "schedlock locks ls") {
		t.Errorf("locks without ls: %v", r.err)
	}
}

func TestLocksLsNeverPrintsThePassword(t *testing.T) {
	for _, args := range [][]string{
		{"locks", "ls", "--dsn", "postgres://ops:s3cr3t-pw@127.0.0.1:1/jobs?connect_timeout=2"},
		{"locks", "ls", "--dsn", "mysql://ops:s3cr3t-pw@127.0.0.1:1/jobs", "-o", "json"},
		{"unlock", "x", "--yes", "--dsn", "postgres://ops:s3cr3t-pw@127.0.0.1:1/jobs?connect_timeout=2"},
	} {
		r := runWithInput(t, false, "", args...)
		if r.err == nil {
			t.Fatalf("%v: connected to a closed port", args)
		}
		for _, s := range []string{r.err.Error(), r.stdout, r.stderr} {
			if strings.Contains(s, "s3cr3t-pw") {
				t.Errorf("%v printed the password: %q", args, s)
			}
		}
		if !strings.Contains(r.err.Error(), "127.0.0.1:1") {
			t.Errorf("%v: error does not say where: %v", args, r.err)
		}
	}
}
