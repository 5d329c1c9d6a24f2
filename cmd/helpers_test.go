package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
	"github.com/schedlock/schedlock/internal/dsn"
	"github.com/schedlock/schedlock/internal/iostreams"
	"github.com/schedlock/schedlock/internal/livetest"
)

// testFactory returns a factory over in-memory streams with only env in
// the environment and cacheDir as the user cache directory.
func testFactory(ios *iostreams.IOStreams, env map[string]string, cacheDir string) *Factory {
	return &Factory{
		IO:       ios,
		Getenv:   func(k string) string { return env[k] },
		CacheDir: func() (string, error) { return cacheDir, nil },
		Scrubber: &dsn.Scrubber{},
	}
}

// result is what one command run produced.
type result struct {
	stdout, stderr string
	err            error
}

// runCmd runs schedlock with args on in-memory streams; tty sets every
// stream's terminal flag.
func runCmd(t *testing.T, tty bool, env map[string]string, args ...string) result {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	ios.SetStdinTTY(tty)
	ios.SetStdoutTTY(tty)
	ios.SetStderrTTY(tty)
	if env == nil {
		env = map[string]string{}
	}
	f := testFactory(ios, env, t.TempDir())
	err := Execute(context.Background(), f, args)
	return result{stdout: out.String(), stderr: errOut.String(), err: err}
}

func testStreams() (*iostreams.IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	return iostreams.Test()
}

// sqlBackend is the *sqlkit.DB behind a SQL backend that Connect opened.
func sqlBackend(b dialects.Backend, err error) (*sqlkit.DB, error) {
	if err != nil {
		return nil, err
	}
	db, ok := sqlkit.Of(b)
	if !ok {
		return nil, fmt.Errorf("%T is not a SQL backend", b)
	}
	return db, nil
}

// emptySQLiteFile is an empty file in a temporary directory: a SQLite
// database with no tables, which the administrative commands open.
func emptySQLiteFile(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// testRoot is the command tree on test streams and a factory of its own,
// for tests that walk the commands and their flags.
func testRoot(t *testing.T) *cobra.Command {
	t.Helper()
	f := testFactory(nil, nil, t.TempDir())
	f.IO, _, _, _ = testStreams()
	return NewCmdRoot(f, &GlobalOptions{})
}

// livePostgresURL is the live PostgreSQL's DSN as a URL; t skips when
// SCHEDLOCK_TEST_POSTGRES_DSN is unset.
func livePostgresURL(t *testing.T) *url.URL {
	t.Helper()
	raw := livetest.DSN(t, livetest.Postgres)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// missingPrivilege is one entry of detect's missing_privileges.
type missingPrivilege struct{ Privilege, Grant string }

// detectMissingPrivileges runs detect -o json on dsn and returns its
// missing privileges; detect failing fails t.
func detectMissingPrivileges(t *testing.T, dsn string) []missingPrivilege {
	t.Helper()
	r := runCmd(t, false, nil, "detect", "--dsn", dsn, "-o", "json")
	if r.err != nil {
		t.Fatalf("detect: %v", r.err)
	}
	var report struct {
		MissingPrivileges []missingPrivilege `json:"missing_privileges"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &report); err != nil {
		t.Fatalf("detect output: %v\n%s", err, r.stdout)
	}
	return report.MissingPrivileges
}

// runRefused runs `run --dsn dsn` on a command that would leave a file,
// and fails t unless run exits 1 with an error containing every one of
// wants and the command did not run.
func runRefused(t *testing.T, dsn string, wants ...string) {
	t.Helper()
	ran := filepath.Join(t.TempDir(), "ran")
	r := runCmd(t, false, nil, "run", "--dsn", dsn, "--name", "refused", "--", "touch", ran)
	if code := ExitCode(r.err); code != CodeError {
		t.Fatalf("run: exit %d (%v), want %d", code, r.err, CodeError)
	}
	for _, want := range wants {
		if msg := r.err.Error(); !strings.Contains(msg, want) {
			t.Errorf("run: error %q: want %q", msg, want)
		}
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the command ran")
	}
}

// capability is one of detect's capabilities.
type capability struct{ Status, Detail, Remedy string }

// detectCapability runs detect -o json on dsn and returns capability
// name; detect failing fails t.
func detectCapability(t *testing.T, dsn, name string) capability {
	t.Helper()
	r := runCmd(t, false, nil, "detect", "--dsn", dsn, "-o", "json")
	if r.err != nil {
		t.Fatalf("detect: %v", r.err)
	}
	var doc struct {
		Capabilities map[string]capability `json:"capabilities"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("detect output: %v\n%s", err, r.stdout)
	}
	return doc.Capabilities[name]
}
