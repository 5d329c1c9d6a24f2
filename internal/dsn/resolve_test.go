//go:build unix

package dsn

import (
	"errors"
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

func TestResolveOrder(t *testing.T) {
	env := map[string]string{}
	var warn strings.Builder
	s := Sources{Getenv: func(k string) string { return env[k] }, Warn: &warn}
	check := func(what, wantDSN, wantSource string) {
		t.Helper()
		d, src, err := Resolve(s)
		if err != nil || d != wantDSN || src != wantSource {
			t.Errorf("%s: %q from %q (%v), want %q from %q", what, d, src, err, wantDSN, wantSource)
		}
	}
	if d, src, err := Resolve(s); !errors.Is(err, ErrNoDSN) || d != "" || src != "" {
		t.Errorf("nothing set: %q from %q (%v), want ErrNoDSN", d, src, err)
	}
	env[EnvDatabaseURL] = "postgres://e/db"
	check("DATABASE_URL only", "postgres://e/db", "$DATABASE_URL")
	envFile := writeDSNFile(t, "postgres://d/db\n", 0o600)
	env[EnvDSNFile] = envFile
	check("SCHEDLOCK_DSN_FILE over DATABASE_URL", "postgres://d/db", "$SCHEDLOCK_DSN_FILE ("+envFile+")")
	env[EnvDSN] = "postgres://c/db"
	check("SCHEDLOCK_DSN over the file", "postgres://c/db", "$SCHEDLOCK_DSN")
	s.File = writeDSNFile(t, "postgres://b/db\r\n", 0o600)
	check("--dsn-file over the environment, CRLF trimmed", "postgres://b/db", "--dsn-file "+s.File)
	s.File = ""
	s.DSN = "postgres://a/db"
	check("--dsn over all", "postgres://a/db", "--dsn")
	if warn.Len() != 0 {
		t.Errorf("warnings for private files: %q", warn.String())
	}
}

func TestResolveRefusals(t *testing.T) {
	dir := t.TempDir()
	empty := writeDSNFile(t, "\n", 0o600)
	for _, tc := range []struct {
		s    Sources
		want string
	}{
		{Sources{DSN: "postgres://u:pw@h/db", File: empty}, "--dsn and --dsn-file exclude each other: give one"},
		{Sources{File: filepath.Join(dir, "missing.dsn")}, "cannot read the DSN file: open " + filepath.Join(dir, "missing.dsn") + ": no such file or directory"},
		{Sources{File: empty}, "DSN file " + empty + " is empty"},
		{Sources{File: dir}, "DSN file " + dir + " is a directory"},
		{Sources{File: writeDSNFile(t, strings.Repeat("x", 65<<10), 0o600)}, "is larger than 64 KiB: it should hold one DSN"},
	} {
		tc.s.Getenv = func(string) string { return "" }
		if _, _, err := Resolve(tc.s); err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, ErrNoDSN) {
			t.Errorf("%+v: %v, want an error with %q", tc.s, err, tc.want)
		}
	}
}

// A DSN file every user can read is used, with one warning line to Warn.
func TestResolveWarnsOfAWorldReadableFile(t *testing.T) {
	path := writeDSNFile(t, "postgres://a/db\n", 0o644)
	var warn strings.Builder
	raw, _, err := Resolve(Sources{File: path, Warn: &warn})
	if err != nil || raw != "postgres://a/db" {
		t.Fatalf("%q, %v", raw, err)
	}
	want := "schedlock: warning: DSN file " + path + " can be read by every user (mode 0644); chmod 600 " + path + "\n"
	if warn.String() != want {
		t.Errorf("warning %q, want %q", warn.String(), want)
	}
	if _, _, err := Resolve(Sources{File: path}); err != nil {
		t.Errorf("without Warn: %v", err)
	}
}
