package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/dsn"
)

// quickChecks keeps command tests short; the full suite is exercised by
// the checks package and the end-to-end test.
var quickChecks = []string{"--check", "detect", "--check", "table.acquire", "--check", "table.contend"}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestSelfcheckSQLite(t *testing.T) {
	for _, tty := range []bool{false, true} {
		t.Run(map[bool]string{false: "piped", true: "tty"}[tty], func(t *testing.T) {
			path := emptySQLiteFile(t, "locks.db")
			r := runCmd(t, tty, nil, append([]string{"selfcheck", "--dsn", path}, quickChecks...)...)
			if r.err != nil {
				t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", r.err, r.stdout, r.stderr)
			}
			// detect, table.acquire, table.contend, then the table cleanup.
			if got := lastLine(r.stdout); got != "4 passed, 0 warned, 0 failed, 0 skipped" {
				t.Errorf("last line %q\n%s", got, r.stdout)
			}
			if tty {
				if !strings.Contains(r.stdout, "┌") || !strings.Contains(r.stdout, "Target:   "+path) {
					t.Errorf("terminal output is not a boxed table with the target:\n%s", r.stdout)
				}
				if !strings.Contains(r.stderr, "table.acquire") {
					t.Errorf("no progress on a terminal's stderr: %q", r.stderr)
				}
			} else {
				if strings.Contains(r.stdout, "┌") || strings.Contains(r.stdout, "\x1b[") {
					t.Errorf("piped output has box drawing or colour:\n%s", r.stdout)
				}
				if !strings.HasPrefix(r.stdout, "CHECK\tSTRATEGY\tSTATUS\t") {
					t.Errorf("piped output is not tab-separated:\n%s", r.stdout)
				}
				if r.stderr != "" {
					t.Errorf("stderr not empty when piped: %q", r.stderr)
				}
			}
		})
	}
}

func TestSelfcheckColour(t *testing.T) {
	path := emptySQLiteFile(t, "locks.db")
	r := runCmd(t, true, nil, append([]string{"selfcheck", "--dsn", path}, quickChecks...)...)
	if r.err != nil || !strings.Contains(r.stdout, "\x1b[32mpass") {
		t.Errorf("no colour on a terminal (err %v):\n%q", r.err, r.stdout)
	}
	r = runCmd(t, true, nil, append([]string{"selfcheck", "--no-color", "--dsn", path}, quickChecks...)...)
	if r.err != nil || strings.Contains(r.stdout, "\x1b[") {
		t.Errorf("--no-color still colours (err %v):\n%q", r.err, r.stdout)
	}
}

func TestSelfcheckWithoutDSNUsesCacheFile(t *testing.T) {
	cache := t.TempDir()
	r := runCmd(t, false, map[string]string{"XDG_CACHE_HOME": cache}, append([]string{"selfcheck", "-o", "json"}, quickChecks...)...)
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.stderr)
	}
	want := filepath.Join(cache, "schedlock", "selfcheck.db")
	var doc struct {
		Target string `json:"target"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Target != want {
		t.Errorf("target %q, want %q", doc.Target, want)
	}
	if _, err := os.Stat(want); err != nil {
		t.Errorf("cache database: %v", err)
	}
}

func TestSelfcheckDSNFromEnvironment(t *testing.T) {
	flagDB, envDB, urlDB := emptySQLiteFile(t, "flag.db"), emptySQLiteFile(t, "env.db"), emptySQLiteFile(t, "url.db")
	env := map[string]string{EnvDSN: envDB, EnvDatabaseURL: urlDB}
	target := func(args ...string) string {
		r := runCmd(t, false, env, append([]string{"selfcheck", "-o", "json", "--check", "detect"}, args...)...)
		if r.err != nil {
			t.Fatal(r.err)
		}
		var doc struct {
			Target string `json:"target"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
			t.Fatal(err)
		}
		return doc.Target
	}
	if got := target("--dsn", flagDB); got != flagDB {
		t.Errorf("--dsn: target %q", got)
	}
	if got := target(); got != envDB {
		t.Errorf("$SCHEDLOCK_DSN: target %q", got)
	}
	delete(env, EnvDSN)
	if got := target(); got != urlDB {
		t.Errorf("$DATABASE_URL: target %q", got)
	}
}

// A file named by a DSN must exist, as for detect and locks ls: a mistyped
// path is refused and nothing is created. Only the embedded cache file
// (no DSN at all) is created on first use.
func TestSelfcheckRefusesMissingFile(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
		env  map[string]string
		path string
	}{
		{"--dsn", []string{"--dsn", filepath.Join(dir, "mistyped.db")}, nil, filepath.Join(dir, "mistyped.db")},
		{"--dsn in a missing directory", []string{"--dsn", filepath.Join(dir, "x", "mistyped.db")}, nil, filepath.Join(dir, "x", "mistyped.db")},
		{"$SCHEDLOCK_DSN", nil, map[string]string{EnvDSN: filepath.Join(dir, "env.db")}, filepath.Join(dir, "env.db")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runCmd(t, false, tc.env, append(append([]string{"selfcheck"}, tc.args...), quickChecks...)...)
			var usage *UsageError
			var exit *ExitError
			if r.err == nil || errors.As(r.err, &usage) || errors.As(r.err, &exit) {
				t.Fatalf("error %v (%T), want a plain error (exit 1)", r.err, r.err)
			}
			if want := "SQLite file " + tc.path + " does not exist: check the path; schedlock selfcheck does not create databases"; r.err.Error() != want {
				t.Errorf("error %q, want %q", r.err, want)
			}
			if _, err := os.Stat(tc.path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: %v; want it not created", tc.path, err)
			}
		})
	}
}

func TestSelfcheckJSONFields(t *testing.T) {
	path := emptySQLiteFile(t, "locks.db")
	r := runCmd(t, false, nil, append([]string{"selfcheck", "--dsn", path, "-o", "json"}, quickChecks...)...)
	if r.err != nil {
		t.Fatal(r.err)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("stdout is not one JSON document: %v\n%s", err, r.stdout)
	}
	for _, k := range []string{"target", "database", "checks", "passed", "failed", "skipped", "warned", "elapsed_ns"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("missing field %q", k)
		}
	}
	db := doc["database"].(map[string]any)
	if db["dialect"] != "sqlite" || db["product"] != "sqlite" || db["version"] == "" {
		t.Errorf("database = %v", db)
	}
	list := doc["checks"].([]any)
	if len(list) != 4 || doc["passed"].(float64) != 4 {
		t.Errorf("checks = %d, passed = %v", len(list), doc["passed"])
	}
	first := list[0].(map[string]any)
	for _, k := range []string{"id", "title", "status", "duration_ns", "detail"} {
		if _, ok := first[k]; !ok {
			t.Errorf("check lacks %q: %v", k, first)
		}
	}
	// The summary line goes to stderr so stdout stays one document.
	if strings.TrimSpace(r.stderr) != "4 passed, 0 warned, 0 failed, 0 skipped" {
		t.Errorf("stderr = %q", r.stderr)
	}
	r = runCmd(t, false, nil, append([]string{"selfcheck", "--dsn", path, "-o", "json", "-q"}, quickChecks...)...)
	if r.err != nil || r.stderr != "" {
		t.Errorf("-q: err %v, stderr %q", r.err, r.stderr)
	}
}

// TestSelfcheckFailingCheckExits3 points the native layout (which needs a
// token column) at an existing ShedLock table: the lease checks fail, and
// the command says so with CodeNegative.
func TestSelfcheckFailingCheckExits3(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks.db")
	d, err := dsn.Parse(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlBackend(d.Connect(context.Background()))
	if err != nil {
		t.Fatal(err)
	}
	tl, err := db.TableLocker(dialects.Table{Preset: dialects.PresetShedlock, Name: "job_lock"})
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.CreateTable(context.Background()); err != nil {
		t.Fatal(err)
	}
	db.Close()

	r := runCmd(t, false, nil, "selfcheck", "--dsn", path, "--table", "job_lock", "--preset", "schedlock", "--check", "table.acquire")
	var exit *ExitError
	if !errors.As(r.err, &exit) || exit.Code != CodeNegative {
		t.Fatalf("error %v (%T), want an ExitError with code 3\n%s", r.err, r.err, r.stdout)
	}
	if !strings.Contains(r.err.Error(), "checks failed") {
		t.Errorf("error %q", r.err)
	}
	if got := lastLine(r.stdout); !strings.Contains(got, "1 failed") {
		t.Errorf("last line %q", got)
	}
}

// TestSelfcheckCheckTimeout: --check-timeout must be positive (exit 2,
// one line, nothing on stdout), and bounds each check: with 1ns every
// check selected times out, fails saying so, and the run exits 3.
func TestSelfcheckCheckTimeout(t *testing.T) {
	path := emptySQLiteFile(t, "locks.db")
	for _, bad := range []string{"0s", "-1s"} {
		r := runCmd(t, false, nil, "selfcheck", "--dsn", path, "--check-timeout", bad)
		if code := ExitCode(r.err); code != CodeUsage || !strings.Contains(r.err.Error(), "--check-timeout must be positive") || strings.Contains(r.err.Error(), "\n") || r.stdout != "" {
			t.Errorf("--check-timeout %s: exit %d, %v, stdout %q; want exit 2 in one line, nothing written", bad, code, r.err, r.stdout)
		}
	}
	r := runCmd(t, false, nil, "selfcheck", "--dsn", path, "--check-timeout", "1ns", "--check", "table.wait", "-o", "json")
	if code := ExitCode(r.err); code != CodeNegative {
		t.Fatalf("exit %d (%v), want 3\n%s", code, r.err, r.stdout)
	}
	var rep struct {
		Checks []struct{ ID, Status, Detail string } `json:"checks"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Checks) == 0 || rep.Checks[0].ID != "table.wait" || rep.Checks[0].Status != "fail" || !strings.Contains(rep.Checks[0].Detail, "timed out after 1ns") {
		t.Errorf("checks %+v; want table.wait failed as timed out after 1ns", rep.Checks)
	}
}

func TestSelfcheckUnsupportedStrategy(t *testing.T) {
	path := emptySQLiteFile(t, "locks.db")
	r := runCmd(t, false, nil, "selfcheck", "--dsn", path, "--strategy", "session")
	if r.err == nil || !errors.Is(r.err, dialects.ErrUnsupported) || !strings.Contains(r.err.Error(), "--strategy table") {
		t.Errorf("error = %v", r.err)
	}
	if code := ExitCode(r.err); code != CodeUsage {
		t.Errorf("exit %d, want %d (a strategy the database cannot do is bad input, as for run)", code, CodeUsage)
	}
}

func TestSelfcheckTimeoutCancelsConnect(t *testing.T) {
	r := runCmd(t, false, nil, "selfcheck", "--dsn", "postgres://app@127.0.0.1:1/jobs", "--timeout", "2s")
	if r.err == nil || !strings.Contains(r.err.Error(), "cannot connect to postgres at 127.0.0.1:1") {
		t.Errorf("error = %v", r.err)
	}
}

func TestSelfcheckCancelledContext(t *testing.T) {
	ios, _, _, _ := testStreams()
	f := testFactory(ios, map[string]string{}, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := Execute(ctx, f, []string{"selfcheck", "--dsn", emptySQLiteFile(t, "x.db")})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
}

func TestSelfcheckDBPathFallbacks(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", filepath.Join(tmp, "tmp"))
	if err := os.Mkdir(filepath.Join(tmp, "tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	f := &Factory{Getenv: func(string) string { return "relative/not/used" }, CacheDir: func() (string, error) { return filepath.Join(tmp, "cache"), nil }}
	got, err := selfcheckDBPath(f)
	if err != nil || got != filepath.Join(tmp, "cache", "schedlock", "selfcheck.db") {
		t.Errorf("relative XDG_CACHE_HOME: %q, %v", got, err)
	}
	f.CacheDir = func() (string, error) { return "", errors.New("no home") }
	got, err = selfcheckDBPath(f)
	if err != nil || !strings.HasPrefix(got, filepath.Join(tmp, "tmp", "schedlock-")) {
		t.Errorf("no cache dir: %q, %v", got, err)
	}
	if fi, err := os.Stat(filepath.Dir(got)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("temp fallback directory: %v %v", fi, err)
	}
}
