//go:build unix

package cmd

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/schedlock/schedlock/internal/metrics"
)

// promptly bounds a run that must not hang: generous, it catches a hang,
// it does not measure speed.
const promptly = 30 * time.Second

// execRunPromptly is execRun under ctx that fails the test when the run
// has not returned within promptly.
func execRunPromptly(t *testing.T, ctx context.Context, args ...string) runResult {
	t.Helper()
	done := make(chan runResult, 1)
	go func() { done <- execRun(t, ctx, "", args...) }()
	select {
	case r := <-done:
		return r
	case <-time.After(promptly):
		t.Fatalf("schedlock %v did not return within %s", args, promptly)
		return runResult{}
	}
}

// dirState describes every entry of dir — name, mode, content, link
// target, device number — so that a test tells that nothing at or beside
// a path changed.
func dirState(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %s", e.Name(), fi.Mode())
		switch m := fi.Mode(); {
		case m&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			fmt.Fprintf(&b, " -> %s", target)
		case m&os.ModeDevice != 0:
			fmt.Fprintf(&b, " rdev %d", fi.Sys().(*syscall.Stat_t).Rdev)
		case m.IsRegular():
			data, _ := os.ReadFile(p)
			fmt.Fprintf(&b, " %q", data)
		case m.IsDir():
			fmt.Fprintf(&b, " [%s]", dirState(t, p))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// oneLine fails the test unless stderr is one line holding every want.
func oneLine(t *testing.T, stderr string, wants ...string) {
	t.Helper()
	if strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
		t.Errorf("stderr is not one line:\n%s", stderr)
	}
	for _, w := range wants {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr %q does not say %q", stderr, w)
		}
	}
}

// --metrics-textfile refuses, in one line before the command runs,
// anything at PATH but a regular file of schedlock's metrics: a character
// device, a symbolic link, someone else's file, a FIFO, a directory, a
// lock file that is not a regular file. The command runs as without
// metrics, with its own exit code, run returns promptly, and nothing at
// or beside PATH changes.
func TestRunMetricsTextfileRefusesWhatIsNotItsOwn(t *testing.T) {
	db, _ := sqliteLocks(t)
	const foreign = "PermitRootLogin no\n"
	cases := []struct {
		name string
		make func(t *testing.T, dir, path string)
		want string
	}{
		{"character device", func(t *testing.T, dir, path string) {
			// 1:3, /dev/null's number; the tests run as root.
			if err := syscall.Mknod(path, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
				t.Fatalf("mknod %s: %v (the tests need root)", path, err)
			}
		}, "is a character device"},
		{"symlink to a foreign file", func(t *testing.T, dir, path string) {
			target := filepath.Join(dir, "sshd_config")
			if err := os.WriteFile(target, []byte(foreign), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		}, "is a symbolic link"},
		{"symlink to a metrics file", func(t *testing.T, dir, path string) {
			if err := os.WriteFile(filepath.Join(dir, "real.prom"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("real.prom", path); err != nil {
				t.Fatal(err)
			}
		}, "is a symbolic link"},
		{"foreign file", func(t *testing.T, dir, path string) {
			if err := os.WriteFile(path, []byte(foreign), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "schedlock.prom is not schedlock's metrics"},
		{"FIFO", func(t *testing.T, dir, path string) {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "is a named pipe"},
		{"directory", func(t *testing.T, dir, path string) {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "is a directory"},
		{"lock file is a FIFO", func(t *testing.T, dir, path string) {
			if err := syscall.Mkfifo(metrics.LockPath(path), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "is a named pipe"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "schedlock.prom")
			c.make(t, dir, path)
			before := dirState(t, dir)
			marker := filepath.Join(t.TempDir(), "ran")
			r := execRunPromptly(t, context.Background(), "run", "--dsn", db, "--name", "refused", "--metrics-textfile", path, "--",
				"sh", "-c", `touch "$0"; exit 3`, marker)
			if r.code != 3 {
				t.Errorf("exit %d (%v), want the command's 3", r.code, r.err)
			}
			if _, err := os.Stat(marker); err != nil {
				t.Error("the command did not run")
			}
			oneLine(t, r.stderr, "--metrics-textfile "+path+": ", c.want, "the run goes on without metrics")
			if after := dirState(t, dir); after != before {
				t.Errorf("the directory changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}

// A path with a control character is a usage error: exit 2 in one line,
// the command does not run, nothing is created.
func TestRunMetricsTextfileControlCharacter(t *testing.T) {
	db, _ := sqliteLocks(t)
	for _, name := range []string{"a\nb.prom", "a\tb.prom", "a\x1b[2Jb.prom"} {
		dir := t.TempDir()
		marker := filepath.Join(t.TempDir(), "ran")
		r := execRunPromptly(t, context.Background(), "run", "--dsn", db, "--name", "ctl", "--metrics-textfile", filepath.Join(dir, name), "--", "touch", marker)
		if r.code != CodeUsage || !strings.Contains(errText(r.err), "control character") || strings.ContainsAny(errText(r.err), "\n\r\t\x1b") {
			t.Errorf("%q: exit %d, %q; want 2 and one line about the control character", name, r.code, errText(r.err))
		}
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("%q: the command ran", name)
		}
		if got := dirState(t, dir); got != "" {
			t.Errorf("%q: the directory holds\n%s", name, got)
		}
	}
}

// A path without .prom is used, with one warning naming node_exporter's
// rule; -q leaves the warning out.
func TestRunMetricsTextfileWithoutProm(t *testing.T) {
	db, _ := sqliteLocks(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "schedlock.txt")
	r := execRunPromptly(t, context.Background(), "run", "--dsn", db, "--name", "noprom", "--metrics-textfile", path, "--", "true")
	if r.code != 0 {
		t.Fatalf("exit %d (%v)", r.code, r.err)
	}
	oneLine(t, r.stderr, "does not end in .prom", "reads only files matching *.prom")
	data, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(data), metrics.Runs+`{lock="noprom"} 1`) {
		t.Errorf("the file holds %q (%v), want the run", data, err)
	}
	r = execRunPromptly(t, context.Background(), "run", "-q", "--dsn", db, "--name", "noprom", "--metrics-textfile", path, "--", "true")
	if r.code != 0 || r.stderr != "" {
		t.Errorf("-q: exit %d (%v), stderr %q; want 0 and nothing", r.code, r.err, r.stderr)
	}
}

// The wait for the metrics file's lock is bounded: with the lock held by
// another process, run gives up on the metrics in one line after the
// bound, exits with the command's code, and the file is not changed.
func TestRunMetricsTextfileLockWaitIsBounded(t *testing.T) {
	old := metricsTimeout
	metricsTimeout = 300 * time.Millisecond
	t.Cleanup(func() { metricsTimeout = old })
	db, _ := sqliteLocks(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "schedlock.prom")
	if r := execRunPromptly(t, context.Background(), "run", "--dsn", db, "--name", "first", "--metrics-textfile", path, "--", "true"); r.code != 0 {
		t.Fatalf("exit %d (%v)", r.code, r.err)
	}
	f, err := os.OpenFile(metrics.LockPath(path), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	before := dirState(t, dir)
	r := execRunPromptly(t, context.Background(), "run", "--dsn", db, "--name", "second", "--metrics-textfile", path, "--", "sh", "-c", "exit 4")
	if r.code != 4 {
		t.Errorf("exit %d (%v), want the command's 4", r.code, r.err)
	}
	oneLine(t, r.stderr, "--metrics-textfile "+path+": ", "deadline exceeded", "the run's metrics were not written")
	if after := dirState(t, dir); after != before {
		t.Errorf("the directory changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// A signal once the command has ended (here: run's context cancelled,
// as Run's does on SIGINT or SIGTERM) ends run promptly even while an end
// hook would run for an hour: the hook is killed, the exit code stays the
// command's.
func TestRunEndsOnSignalAfterCommand(t *testing.T) {
	db, _ := sqliteLocks(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "hook.pid")
	hook := `echo $$ > ` + pidFile + `.tmp && mv ` + pidFile + `.tmp ` + pidFile + `; exec sleep 600`
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan runResult, 1)
	go func() {
		done <- execRun(t, ctx, "", "run", "--dsn", db, "--name", "after", "--hook-timeout", "1h", "--on-failure", hook, "--", "sh", "-c", "exit 5")
	}()
	var pid int
	for deadline := time.Now().Add(promptly); pid == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the end hook did not start within %s", promptly)
		}
		if b, err := os.ReadFile(pidFile); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
	}
	cancel()
	select {
	case r := <-done:
		if r.code != 5 {
			t.Errorf("exit %d (%v), want the command's 5", r.code, r.err)
		}
		oneLine(t, r.stderr, "--on-failure hook", "abandoned")
	case <-time.After(promptly):
		t.Fatalf("run did not end within %s of the signal (--hook-timeout 1h)", promptly)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("the end hook (pid %d) still runs", pid)
	}
}
