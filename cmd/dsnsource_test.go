//go:build unix

package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeDSNFile writes content to a file of mode perm and returns its path.
func writeDSNFile(t *testing.T, content string, perm os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "jobs.dsn")
	if err := os.WriteFile(path, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil { // umask may have cut it
		t.Fatal(err)
	}
	return path
}

// A DSN file every user can read works, with a warning (not under -q).
func TestDSNFileWorldReadableWarns(t *testing.T) {
	db := filepath.Join(t.TempDir(), "locks.db")
	if err := os.WriteFile(db, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	path := writeDSNFile(t, db+"\n", 0o644)
	r := runCmd(t, false, nil, "detect", "--dsn-file", path)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if want := "warning: DSN file " + path + " can be read by every user (mode 0644); chmod 600 " + path; !strings.Contains(r.stderr, want) {
		t.Errorf("stderr %q, want %q", r.stderr, want)
	}
	if r := runCmd(t, false, nil, "detect", "-q", "--dsn-file", path); r.err != nil || strings.Contains(r.stderr, "warning") {
		t.Errorf("-q: %v, stderr %q", r.err, r.stderr)
	}
}

// Bad DSN files are usage errors, in one line, without the password.
func TestDSNFileRefusals(t *testing.T) {
	dir := t.TempDir()
	empty := writeDSNFile(t, "\n", 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"locks", "ls", "--dsn-file", filepath.Join(dir, "missing.dsn")}, "cannot read the DSN file: open " + filepath.Join(dir, "missing.dsn") + ": no such file or directory"},
		{[]string{"locks", "ls", "--dsn-file", empty}, "DSN file " + empty + " is empty"},
		{[]string{"locks", "ls", "--dsn-file", dir}, "DSN file " + dir + " is a directory"},
		{[]string{"run", "--dsn", "postgres://u:pw@h/db", "--dsn-file", empty, "--name", "x", "--", "true"}, "--dsn and --dsn-file exclude each other"},
		{[]string{"selfcheck", "--dsn-file", writeDSNFile(t, strings.Repeat("x", 65<<10), 0o600)}, "is larger than 64 KiB"},
	} {
		r := runCmd(t, false, nil, tc.args...)
		if ExitCode(r.err) != CodeUsage || !strings.Contains(r.err.Error(), tc.want) || strings.Contains(r.err.Error(), "\n") {
			t.Errorf("%v: exit %d, %v; want a usage error with %q", tc.args, ExitCode(r.err), r.err, tc.want)
		}
	}
	bad := writeDSNFile(t, "postgres://app:s3cr3t-in-file@db1:5432/jobs?x-bogus=1\n", 0o600)
	r := runCmd(t, false, nil, "locks", "ls", "--dsn-file", bad)
	if r.err == nil || strings.Contains(r.err.Error(), "s3cr3t-in-file") || !strings.Contains(r.err.Error(), "--dsn-file "+bad) {
		t.Errorf("bad DSN in a file: %v; want an error naming the file, without the password", r.err)
	}
}

// run reads its DSN from --dsn-file, and COMMAND inherits none of the DSN
// variables unless --keep-env.
func TestRunDSNFileAndEnvScrubbing(t *testing.T) {
	db := filepath.Join(t.TempDir(), "locks.db")
	path := writeDSNFile(t, db+"\n", 0o600)
	t.Setenv(EnvDSN, "postgres://app:s3cr3t-a@db1/jobs")
	t.Setenv(EnvDSNFile, path)
	t.Setenv(EnvDatabaseURL, "postgres://app:s3cr3t-b@db1/jobs")
	t.Setenv("SCHEDLOCK_TEST_KEPT", "kept")
	script := `printf '%s|%s|%s|%s|%s' "${SCHEDLOCK_DSN-unset}" "${SCHEDLOCK_DSN_FILE-unset}" "${DATABASE_URL-unset}" "${SCHEDLOCK_TEST_KEPT-unset}" "$SCHEDLOCK_LOCK_NAME"`
	r := execRun(t, context.Background(), "", "run", "--dsn-file", path, "--name", "scrub", "--create-table", "--", "sh", "-c", script)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if want := "unset|unset|unset|kept|scrub"; r.stdout != want {
		t.Errorf("COMMAND saw %q, want %q", r.stdout, want)
	}
	r = execRun(t, context.Background(), "", "run", "--dsn-file", path, "--name", "scrub", "--keep-env", "--", "sh", "-c", script)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if want := "postgres://app:s3cr3t-a@db1/jobs|" + path + "|postgres://app:s3cr3t-b@db1/jobs|kept|scrub"; r.stdout != want {
		t.Errorf("with --keep-env COMMAND saw %q, want %q", r.stdout, want)
	}
}
