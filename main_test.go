package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/cmd"
)

func TestExitCode(t *testing.T) {
	cases := []struct {
		err  error
		code int
	}{
		{nil, 0},
		{errors.New("cannot connect"), 1},
		{&cmd.UsageError{Err: errors.New("bad flag")}, 2},
		{fmt.Errorf("wrapped: %w", &cmd.UsageError{Err: errors.New("bad flag")}), 2},
		{&cmd.ExitError{Code: 3, Err: errors.New("2 of 9 checks failed")}, 3},
		{fmt.Errorf("%w: selfcheck stopped", cmd.ErrInterrupted), 130},
		{fmt.Errorf("selfcheck interrupted: %w", context.Canceled), 130},
		{context.DeadlineExceeded, 1},
	}
	for _, tc := range cases {
		var stderr bytes.Buffer
		if got := exitCode(tc.err, &stderr); got != tc.code {
			t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.code)
		}
		switch {
		case tc.err == nil && stderr.Len() != 0:
			t.Errorf("success printed %q", stderr.String())
		case tc.err != nil && stderr.String() != "schedlock: "+tc.err.Error()+"\n":
			t.Errorf("stderr %q", stderr.String())
		}
	}
}

func TestErrorIsOneLine(t *testing.T) {
	var stderr bytes.Buffer
	exitCode(errors.Join(errors.New("first\n  detail"), errors.New("second")), &stderr)
	if got := stderr.String(); got != "schedlock: first; detail; second\n" {
		t.Errorf("stderr %q", got)
	}
}

// TestBinary builds schedlock and runs it as a user would, with HOME and
// the cache directory in a temporary directory: the quick start must work
// with no DSN and no server.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "schedlock")
	// The release's go build flags (build tags included), keeping the
	// symbol table that assertMethodsTrimmed reads; its -modfile (go-ora
	// with compressed tables) written here as the release's before hook
	// writes it.
	args := []string{"build"}
	for _, f := range readGoreleaser(t).Builds[0].Flags {
		if _, ok := strings.CutPrefix(f, "-modfile="); ok {
			ora := filepath.Join(dir, "oracharsets")
			if out, err := exec.Command("go", "run", "scripts/oracharsets/main.go", "-out", ora).CombinedOutput(); err != nil {
				t.Fatalf("scripts/oracharsets: %v\n%s", err, out)
			}
			f = "-modfile=" + filepath.Join(ora, "go.mod")
		}
		args = append(args, f)
	}
	args = append(args, "-o", bin, ".")
	build := exec.Command("go", args...)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	assertStatic(t, bin)
	assertMethodsTrimmed(t, bin)
	home := filepath.Join(dir, "home")
	cache := filepath.Join(dir, "cache")
	run := func(args ...string) (stdout, stderr string, code int) {
		c := exec.Command(bin, args...)
		c.Env = []string{"HOME=" + home, "XDG_CACHE_HOME=" + cache, "PATH=" + os.Getenv("PATH")}
		var out, errOut bytes.Buffer
		c.Stdout, c.Stderr = &out, &errOut
		err := c.Run()
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit):
			code = exit.ExitCode()
		case err != nil:
			t.Fatal(err)
		}
		return out.String(), errOut.String(), code
	}

	stdout, stderr, code := run("selfcheck")
	if code != 0 {
		t.Fatalf("selfcheck exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	lines := strings.Split(strings.TrimRight(stdout, "\n"), "\n")
	// SQLite has no session locks, SKIP LOCKED or NOWAIT: those probes skip,
	// and so do claim.skip (optimistic claims lock no rows) and
	// claim.isolation (no isolation pitfall).
	if last := lines[len(lines)-1]; !regexp.MustCompile(`^\d+ passed, \d+ warned, 0 failed, 5 skipped$`).MatchString(last) {
		t.Errorf("last line %q", last)
	}
	if _, err := os.Stat(filepath.Join(cache, "schedlock", "selfcheck.db")); err != nil {
		t.Errorf("selfcheck database not in the cache directory: %v", err)
	}

	// Ctrl-C mid-run: the partial report is printed and the exit code is 130.
	c := exec.Command(bin, "selfcheck")
	c.Env = []string{"HOME=" + home, "XDG_CACHE_HOME=" + cache}
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if err := c.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := c.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Errorf("interrupted selfcheck: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errOut.String())
	}
	if !strings.HasPrefix(errOut.String(), "schedlock: interrupted") {
		t.Errorf("interrupted selfcheck stderr %q", errOut.String())
	}

	_, stderr, code = run("-o", "xml", "version")
	if code != 2 || stderr != "schedlock: unknown output format \"xml\": use one of table, json, yaml (see 'schedlock version --help')\n" {
		t.Errorf("-o xml: exit %d, stderr %q", code, stderr)
	}

	stdout, _, code = run("version", "-o", "json")
	if code != 0 || !strings.Contains(stdout, `"go_version"`) {
		t.Errorf("version -o json: exit %d\n%s", code, stdout)
	}

	_, stderr, code = run("selfcheck", "--dsn", "postgres://app:s3cr3t-P%40ss@127.0.0.1:1/jobs")
	if code != 1 || strings.Count(stderr, "\n") != 1 || strings.Contains(stderr, "s3cr3t") {
		t.Errorf("refused connection: exit %d, stderr %q", code, stderr)
	}
}
