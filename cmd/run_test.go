//go:build unix

package cmd

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	_ "github.com/schedlock/schedlock/dialects/all"
	"github.com/schedlock/schedlock/internal/dsn"
	"github.com/schedlock/schedlock/internal/iostreams"
	"github.com/schedlock/schedlock/internal/livetest"
)

// syncBuffer is a bytes.Buffer safe for the child's copy goroutine and the
// test reading it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runResult is what one in-process `schedlock run` produced.
type runResult struct {
	stdout, stderr string
	err            error
	code           int
	took           time.Duration
}

// execRun runs schedlock with args under ctx, with stdin as input.
func execRun(t *testing.T, ctx context.Context, stdin string, args ...string) runResult {
	t.Helper()
	ios, in, _, _ := iostreams.Test()
	in.WriteString(stdin)
	out, errOut := &syncBuffer{}, &syncBuffer{}
	ios.Out, ios.ErrOut = out, errOut
	f := testFactory(ios, map[string]string{}, t.TempDir())
	start := time.Now()
	err := Execute(ctx, f, args)
	return runResult{stdout: out.String(), stderr: errOut.String(), err: err, code: ExitCode(err), took: time.Since(start)}
}

// sqliteLocks returns a SQLite file with the native lock table and a
// locker on it.
func sqliteLocks(t *testing.T) (string, dialects.TableLocker) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "locks.db")
	return path, openTableLocker(t, path, dialects.Table{})
}

// openTableLocker connects to raw and returns the locker of table t,
// creating the table.
func openTableLocker(t *testing.T, raw string, table dialects.Table) dialects.TableLocker {
	t.Helper()
	d, err := dsn.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db, err := sqlBackend(d.Connect(ctx))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	l, err := db.TableLocker(table)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	return l
}

// assertFree checks that name can be acquired now, and releases it.
func assertFree(t *testing.T, l dialects.Locker, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	lease, err := l.Acquire(ctx, name, dialects.Options{AtMost: time.Minute})
	if err != nil {
		t.Fatalf("lock %q is not free: %v", name, err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// hold acquires name for the test's duration (or until released).
func hold(t *testing.T, l dialects.Locker, name, owner string) dialects.Lease {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	lease, err := l.Acquire(ctx, name, dialects.Options{AtMost: time.Minute, Owner: owner})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lease.Release(context.Background()) })
	return lease
}

func TestRunBadInput(t *testing.T) {
	db, locker := sqliteLocks(t)
	base := []string{"run", "--dsn", db, "--name", "bad"}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no command", base, "no command to run"},
		{"nothing after --", append(base, "--"), "no command to run"},
		{"unknown strategy", append(base, "--strategy", "advisory", "--", "true"), `unknown strategy "advisory"`},
		{"at-least over at-most", append(base, "--at-most", "1m", "--at-least", "2m", "--", "true"), "--at-least (2m0s) must not exceed --at-most (1m0s)"},
		{"empty name", []string{"run", "--dsn", db, "--name", "", "--", "true"}, "--name is required"},
		{"no name", []string{"run", "--dsn", db, "--", "true"}, "--name is required"},
		{"no name names --key", []string{"run", "--dsn", db, "--", "true"}, "or --key KEY"},
		{"invalid UTF-8 name", []string{"run", "--dsn", db, "--name", "\xff", "--", "true"}, "not valid UTF-8"},
		{"negative at-most", append(base, "--at-most", "-1s", "--", "true"), "--at-most must be positive"},
		{"zero at-most", append(base, "--at-most", "0s", "--", "true"), "--at-most must be positive"},
		{"negative at-least", append(base, "--at-least", "-1s", "--", "true"), "--at-least must not be negative"},
		{"negative wait", append(base, "--wait", "-1s", "--", "true"), "--wait must not be negative"},
		{"zero partition-bound", append(base, "--strategy", "session", "--partition-bound", "0", "--", "true"), "--partition-bound must lie between 1s and 1h0m0s, got 0s"},
		{"partition-bound under 1s", append(base, "--strategy", "session", "--partition-bound", "500ms", "--", "true"), "--partition-bound must lie between 1s and 1h0m0s, got 500ms"},
		{"negative kill-grace", append(base, "--kill-grace", "-1s", "--", "true"), "--kill-grace must not be negative"},
		{"kill-grace too long for the lease", append(base, "--at-most", "10s", "--kill-grace", "5s", "--", "true"), "--kill-grace (5s) must be under half of --at-most (10s)"},
		{"skipped code out of range", append(base, "--skipped-exit-code", "256", "--", "true"), "--skipped-exit-code must be between 0 and 255"},
		{"owner too long", append(base, "--owner", strings.Repeat("o", 256), "--", "true"), "owner is 256 bytes"},
		{"no session locks on SQLite", append(base, "--strategy", "session", "--", "true"), "no session locks"},
		{"table flags with session", append(base, "--strategy", "session", "--table", "jobs_lock", "--", "true"), "apply to the table strategy"},
		{"bad table name", append(base, "--table", "a b", "--", "true"), "not a plain identifier"},
		{"unknown preset", append(base, "--preset", "quartz", "--", "true"), `unknown preset "quartz"`},
		{"no DSN", []string{"run", "--name", "bad", "--", "true"}, "no database"},
		{"output format", append([]string{"-o", "json"}, append(base, "--", "true")...), `schedlock run takes no -o/--output`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := execRun(t, context.Background(), "", tc.args...)
			if r.code != CodeUsage {
				t.Fatalf("exit %d (%v), want %d", r.code, r.err, CodeUsage)
			}
			if msg := r.err.Error(); !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line saying %q", msg, tc.want)
			}
			assertFree(t, locker, "bad")
		})
	}
}

// TestRunHelpNameOrKey: --name is required only where --key does not name
// the lock, and run's help says so on the --name line.
func TestRunHelpNameOrKey(t *testing.T) {
	r := execRun(t, context.Background(), "", "run", "--help")
	if r.err != nil {
		t.Fatalf("run --help: %v", r.err)
	}
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.Contains(line, "--name string") {
			if !strings.Contains(line, "required unless --key") {
				t.Errorf("--name line %q: want it to say it is required unless --key", line)
			}
			return
		}
	}
	t.Fatalf("run --help has no --name line:\n%s", r.stdout)
}

func TestRunCommandNotFoundReleasesLock(t *testing.T) {
	db, locker := sqliteLocks(t)
	r := execRun(t, context.Background(), "", "run", "--dsn", db, "--name", "missing", "--", "schedlock-no-such-command", "x")
	if r.code != 127 {
		t.Fatalf("exit %d (%v), want 127", r.code, r.err)
	}
	if msg := r.err.Error(); !strings.Contains(msg, "command not found: schedlock-no-such-command") || !strings.Contains(msg, "released") {
		t.Errorf("error %q", msg)
	}
	assertFree(t, locker, "missing")
}

func TestRunCommandNotExecutableIs126(t *testing.T) {
	db, locker := sqliteLocks(t)
	script := filepath.Join(t.TempDir(), "job.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := execRun(t, context.Background(), "", "run", "--dsn", db, "--name", "noexec", "--", script)
	if r.code != 126 {
		t.Fatalf("exit %d (%v), want 126", r.code, r.err)
	}
	assertFree(t, locker, "noexec")
}

// The command gets stdin and the lock's environment, writes to stdout and
// stderr, and its exit code is schedlock's.
func TestRunPassesStreamsEnvAndExitCode(t *testing.T) {
	db, locker := sqliteLocks(t)
	script := `cat; printf '%s|%s|%s\n' "$SCHEDLOCK_LOCK_NAME" "$SCHEDLOCK_OWNER" "$SCHEDLOCK_FENCING_TOKEN"; echo oops >&2; exit 3`
	r := execRun(t, context.Background(), "input line\n", "run", "--dsn", db, "--name", "env", "--owner", "node-a", "--", "sh", "-c", script)
	if r.code != 3 {
		t.Fatalf("exit %d (%v), want the command's 3", r.code, r.err)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 || lines[0] != "input line" {
		t.Fatalf("stdout %q: want the input, then the environment", r.stdout)
	}
	fields := strings.Split(lines[1], "|")
	if fields[0] != "env" || fields[1] != "node-a" {
		t.Errorf("command saw name %q owner %q", fields[0], fields[1])
	}
	if tok, err := strconv.ParseInt(fields[2], 10, 64); err != nil || tok <= 0 {
		t.Errorf("fencing token %q: want a positive number", fields[2])
	}
	if r.stderr != "oops\n" {
		t.Errorf("stderr %q: want only the command's", r.stderr)
	}
	if !strings.Contains(r.err.Error(), "sh exited with code 3") {
		t.Errorf("error %q", r.err)
	}
	assertFree(t, locker, "env")
}

// Each run gets a fencing token larger than the last.
func TestRunFencingTokenGrows(t *testing.T) {
	db, _ := sqliteLocks(t)
	last := int64(0)
	for i := 0; i < 3; i++ {
		r := execRun(t, context.Background(), "", "run", "--dsn", db, "--name", "tok", "--", "sh", "-c", `echo "$SCHEDLOCK_FENCING_TOKEN"`)
		tok, err := strconv.ParseInt(strings.TrimSpace(r.stdout), 10, 64)
		if r.err != nil || err != nil || tok <= last {
			t.Fatalf("run %d: token %q after %d (%v)", i, r.stdout, last, r.err)
		}
		last = tok
	}
}

func TestRunSkipsWhenHeld(t *testing.T) {
	db, locker := sqliteLocks(t)
	hold(t, locker, "busy", "node-b:42")
	marker := filepath.Join(t.TempDir(), "ran")
	cmd := []string{"--", "touch", marker}
	cases := []struct {
		name   string
		flags  []string
		code   int
		silent bool
	}{
		{"default exit 0", nil, 0, false},
		{"skipped exit code", []string{"--skipped-exit-code", "99"}, 99, false},
		{"quiet", []string{"-q"}, 0, true},
		{"quiet keeps a non-zero skip", []string{"-q", "--skipped-exit-code", "99"}, 99, false},
		{"waited in vain", []string{"--wait", "300ms"}, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"run", "--dsn", db, "--name", "busy"}, tc.flags...), cmd...)
			r := execRun(t, context.Background(), "", args...)
			if r.code != tc.code {
				t.Fatalf("exit %d (%v), want %d", r.code, r.err, tc.code)
			}
			if tc.silent {
				if r.err != nil || r.stderr != "" {
					t.Fatalf("quiet skip said %v / %q", r.err, r.stderr)
				}
			} else if msg := r.err.Error(); !strings.Contains(msg, `skipped touch: lock "busy" is held by node-b:42`) {
				t.Fatalf("error %q: want one line naming the holder", msg)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the command ran")
			}
		})
	}
}

func TestRunWaitsForRelease(t *testing.T) {
	db, locker := sqliteLocks(t)
	lease := hold(t, locker, "queue", "node-b")
	time.AfterFunc(300*time.Millisecond, func() { _ = lease.Release(context.Background()) })
	r := execRun(t, context.Background(), "", "run", "--dsn", db, "--name", "queue", "--wait", "10s", "--", "echo", "ran")
	if r.err != nil || r.stdout != "ran\n" {
		t.Fatalf("run: %v, stdout %q", r.err, r.stdout)
	}
	if r.took < 250*time.Millisecond {
		t.Fatalf("ran after %s, before the holder released", r.took)
	}
}

// --timeout bounds the wait: a plain error (exit 1), not an interruption.
func TestRunTimeoutWhileWaiting(t *testing.T) {
	db, locker := sqliteLocks(t)
	hold(t, locker, "slow", "node-b")
	r := execRun(t, context.Background(), "", "--timeout", "300ms", "run", "--dsn", db, "--name", "slow", "--wait", "1m", "--", "true")
	if r.code != CodeError || !strings.Contains(r.err.Error(), "after --timeout 300ms") {
		t.Fatalf("exit %d (%v), want 1 naming --timeout", r.code, r.err)
	}
	if r.took > 5*time.Second {
		t.Fatalf("took %s", r.took)
	}
}

// Cancelling schedlock's context (SIGINT/SIGTERM) while it waits for the
// lock gives up at once; the command never starts.
func TestRunInterruptedWhileWaiting(t *testing.T) {
	db, locker := sqliteLocks(t)
	hold(t, locker, "wait", "node-b")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	marker := filepath.Join(t.TempDir(), "ran")
	r := execRun(t, ctx, "", "run", "--dsn", db, "--name", "wait", "--wait", "1m", "--", "touch", marker)
	if !errors.Is(r.err, ErrInterrupted) || r.took > 5*time.Second {
		t.Fatalf("error %v after %s, want an interruption at once", r.err, r.took)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran")
	}
}

// Once the command runs, cancelling schedlock's context must not end the
// lease: the lock stays held until the command exits (signals reach the
// command through their own channel), and the command's exit code stands.
func TestRunLeaseOutlivesContextOnceStarted(t *testing.T) {
	db, locker := sqliteLocks(t)
	dir := t.TempDir()
	started, finish := filepath.Join(dir, "started"), filepath.Join(dir, "finish")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan runResult, 1)
	go func() {
		done <- execRun(t, ctx, "", "run", "--dsn", db, "--name", "detach", "--at-most", "3s", "--kill-grace", "1s", "--",
			"sh", "-c", `touch "$0"; while [ ! -e "$1" ]; do sleep 0.05; done; exit 5`, started, finish)
	}()
	waitForFile(t, started)
	cancel()
	time.Sleep(1200 * time.Millisecond) // past the first refresh at 1s
	_, err := locker.Acquire(context.Background(), "detach", dialects.Options{AtMost: time.Minute})
	if err := os.WriteFile(finish, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(err, dialects.ErrHeld) {
		t.Fatalf("acquire while the command runs after the cancel: %v, want held", err)
	}
	r := <-done
	if r.code != 5 {
		t.Fatalf("exit %d (%v), want the command's 5", r.code, r.err)
	}
	assertFree(t, locker, "detach")
}

// waitForFile waits up to 10s for the command to create path.
func waitForFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Someone else takes the lock over (force-unlock, then acquire): the next
// refresh is refused, the command is stopped and run exits 113.
func TestRunStopsCommandWhenLeaseTakenOver(t *testing.T) {
	db, locker := sqliteLocks(t)
	started := filepath.Join(t.TempDir(), "started")
	done := make(chan runResult, 1)
	go func() {
		done <- execRun(t, context.Background(), "", "run", "--dsn", db, "--name", "stolen", "--at-most", "1500ms", "--kill-grace", "500ms", "--",
			"sh", "-c", `touch "$0"; exec sleep 30`, started)
	}()
	waitForFile(t, started)
	ctx := context.Background()
	if ok, err := locker.(interface {
		Expire(context.Context, string) (bool, error)
	}).Expire(ctx, "stolen"); err != nil || !ok {
		t.Fatalf("expire: %v, %v", ok, err)
	}
	hold(t, locker, "stolen", "thief")
	r := <-done
	if r.code != CodeLeaseLost {
		t.Fatalf("exit %d (%v), want %d", r.code, r.err, CodeLeaseLost)
	}
	if msg := r.err.Error(); !strings.Contains(msg, "lost") || !strings.Contains(msg, "stopped sh") {
		t.Errorf("error %q", msg)
	}
	if r.took > 5*time.Second {
		t.Errorf("took %s", r.took)
	}
}

// At-least on the table strategy: the lock stays taken after a quick run,
// until locked-at + at-least.
func TestRunAtLeastTable(t *testing.T) {
	db, locker := sqliteLocks(t)
	r := execRun(t, context.Background(), "", "run", "--dsn", db, "--name", "short", "--at-least", "2s", "--", "true")
	if r.err != nil {
		t.Fatal(r.err)
	}
	_, err := locker.Acquire(context.Background(), "short", dialects.Options{AtMost: time.Minute})
	if !errors.Is(err, dialects.ErrHeld) {
		t.Fatalf("acquire right after a quick run with --at-least 2s: %v, want held", err)
	}
	row, found, err := locker.Inspect(context.Background(), "short")
	if err != nil || !found {
		t.Fatalf("row: %v %v", found, err)
	}
	if d := row.Until.Sub(row.LockedAt); d < 1900*time.Millisecond || d > 2100*time.Millisecond {
		t.Fatalf("lock kept until %s after it was taken, want 2s", d)
	}
}

// Background jobs the command leaves in its group are stopped before the
// lock is released, and the user is told.
func TestRunStopsLeftoversBeforeRelease(t *testing.T) {
	db, locker := sqliteLocks(t)
	r := execRun(t, context.Background(), "", "run", "--dsn", db, "--name", "bg", "--kill-grace", "1s", "--", "sh", "-c", `sleep 30 & echo $!`)
	if r.err != nil {
		t.Fatal(r.err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(r.stdout))
	if err != nil {
		t.Fatalf("stdout %q", r.stdout)
	}
	if err := processAlive(pid); err == nil {
		t.Fatalf("background job %d still runs after run returned", pid)
	}
	if !strings.Contains(r.stderr, "left processes running") {
		t.Errorf("stderr %q", r.stderr)
	}
	assertFree(t, locker, "bg")
}

// processAlive returns nil when pid runs (a zombie counts as gone).
func processAlive(pid int) error {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return err
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(fields) > 0 && (fields[0] == "Z" || fields[0] == "X") {
		return errors.New("zombie")
	}
	return nil
}

func TestRunMissingTable(t *testing.T) {
	db := filepath.Join(t.TempDir(), "locks.db")
	r := execRun(t, context.Background(), "", "run", "--dsn", db, "--name", "x", "--table", "job_lock", "--", "true")
	if r.code != CodeError || !strings.Contains(r.err.Error(), "--create-table") {
		t.Fatalf("exit %d (%v), want 1 pointing at --create-table", r.code, r.err)
	}
	r = execRun(t, context.Background(), "", "run", "--dsn", db, "--name", "x", "--table", "job_lock", "--create-table", "-v", "--", "echo", "ok")
	if r.err != nil || r.stdout != "ok\n" {
		t.Fatalf("with --create-table: %v, stdout %q", r.err, r.stdout)
	}
	if !strings.Contains(r.stderr, "table strategy (a lock table was named)") || !strings.Contains(r.stderr, `released lock "x"`) {
		t.Errorf("verbose stderr %q", r.stderr)
	}
}

// liveSessionDSN returns the PostgreSQL DSN, skipping when it is unset.
func liveSessionDSN(t *testing.T) string {
	t.Helper()
	raw := livetest.DSN(t, livetest.Postgres)
	return raw
}

// On a session lock schedlock honours --at-least by holding the lock
// itself after a quick command, then releases it; there is no fencing
// token.
func TestRunSessionAtLeastAndNoToken(t *testing.T) {
	raw := liveSessionDSN(t)
	name := "cmd-run-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	r := execRun(t, context.Background(), "", "run", "--dsn", raw, "--name", name, "--strategy", "session", "--at-least", "1s", "--",
		"sh", "-c", `echo "${SCHEDLOCK_FENCING_TOKEN-none}"`)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.stdout != "none\n" {
		t.Errorf("SCHEDLOCK_FENCING_TOKEN: %q, want unset", r.stdout)
	}
	if r.took < time.Second {
		t.Errorf("run returned after %s, before --at-least 1s", r.took)
	}
	again := execRun(t, context.Background(), "", "run", "--dsn", raw, "--name", name, "--strategy", "session", "--", "true")
	if again.err != nil {
		t.Fatalf("lock not released after --at-least: %v", again.err)
	}
}
