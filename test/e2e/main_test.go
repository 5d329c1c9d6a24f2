//go:build unix

// Package e2e runs the built schedlock binary as a user would: several
// processes at once, signals, crashes and a database that goes away.
package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/dialects"
	_ "github.com/schedlock/schedlock/dialects/all"
	"github.com/schedlock/schedlock/dialects/sqlkit"
	"github.com/schedlock/schedlock/internal/dsn"
	"github.com/schedlock/schedlock/internal/livetest"
	"github.com/schedlock/schedlock/internal/testbin"
)

// Environment variables naming the live servers; unset skips their tests.
const (
	envPostgres = "SCHEDLOCK_TEST_POSTGRES_DSN"
	envMySQL    = "SCHEDLOCK_TEST_MYSQL_DSN"
)

// binary is the schedlock built for this test run.
var binary string

func TestMain(m *testing.M) { testbin.Main(m, filepath.Join("..", ".."), &binary) }

// backend is one database and strategy the tests run against.
type backend struct {
	name     string // subtest name, e.g. "postgres/session"
	dsn      string // as the CLI takes it
	strategy dialects.Strategy
	table    string // lock table for the table strategy
}

// args are the flags selecting the backend.
func (b backend) args() []string {
	a := []string{"--dsn", b.dsn, "--strategy", string(b.strategy)}
	if b.table != "" {
		a = append(a, "--table", b.table)
	}
	return a
}

// liveDSN returns the DSN in env, skipping the test when it is unset.
func liveDSN(t *testing.T, env string) string {
	t.Helper()
	raw := livetest.DSN(t, env)
	return raw
}

// backendCase makes one backend of the contention and crash tests.
type backendCase struct {
	name string
	make func(t *testing.T) backend
}

// allBackends are PostgreSQL and MariaDB with both strategies (skipped
// when their DSNs are unset) and SQLite with the table strategy.
var allBackends = []backendCase{
	{"postgres/session", func(t *testing.T) backend { return newBackend(t, liveDSN(t, envPostgres), dialects.StrategySession) }},
	{"postgres/table", func(t *testing.T) backend { return newBackend(t, liveDSN(t, envPostgres), dialects.StrategyTable) }},
	{"mysql/session", func(t *testing.T) backend { return newBackend(t, liveDSN(t, envMySQL), dialects.StrategySession) }},
	{"mysql/table", func(t *testing.T) backend { return newBackend(t, liveDSN(t, envMySQL), dialects.StrategyTable) }},
	{"sqlite/table", func(t *testing.T) backend { return newBackend(t, sqliteDSN(t), dialects.StrategyTable) }},
}

// sqliteDSN is a fresh SQLite file.
func sqliteDSN(t *testing.T) string { return filepath.Join(t.TempDir(), "locks.db") }

// newBackend connects to raw and, for the table strategy, creates a lock
// table of its own, dropped when the test ends.
func newBackend(t *testing.T, raw string, strategy dialects.Strategy) backend {
	t.Helper()
	d, err := dsn.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	b := backend{name: d.Family + "/" + string(strategy), dsn: raw, strategy: strategy}
	if strategy == dialects.StrategyTable {
		b.table = "e2e_run_" + randomHex(4)
		createTable(t, raw, b.table)
	}
	return b
}

// connect opens raw with its dialect; closed when the test ends.
func connect(t *testing.T, raw string) *sqlkit.DB {
	t.Helper()
	d, err := dsn.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := d.Connect(ctx)
	if err != nil {
		t.Fatalf("connect %s: %v", d.Redacted(), err)
	}
	db, ok := sqlkit.Of(b)
	if !ok {
		t.Fatalf("connect %s: %T is not a SQL backend", d.Redacted(), b)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// tableLocker returns the locker of lock table name on raw.
func tableLocker(t *testing.T, raw, name string) dialects.TableLocker {
	t.Helper()
	l, err := connect(t, raw).TableLocker(dialects.Table{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// createTable creates lock table name on raw and drops it at the end.
func createTable(t *testing.T, raw, name string) {
	t.Helper()
	l := tableLocker(t, raw, name)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := l.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if dropper, ok := l.(dialects.TableDropper); ok {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := dropper.DropTable(ctx); err != nil {
				t.Errorf("drop %s: %v", name, err)
			}
		}
	})
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// lockName is a lock name no other test run uses.
func lockName(prefix string) string { return "e2e-" + prefix + "-" + randomHex(4) }

// serverAddr is the host:port of a live server DSN (URL or go-sql-driver
// form).
func serverAddr(t *testing.T, raw string) string {
	t.Helper()
	if cfg, err := mysql.ParseDSN(raw); err == nil && !strings.Contains(raw, "://") {
		return cfg.Addr
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	host := u.Host
	if _, _, err := net.SplitHostPort(host); err != nil {
		t.Fatalf("DSN has no host:port: %s", u.Redacted())
	}
	return host
}

// withAddr returns raw pointing at addr instead of its server.
func withAddr(t *testing.T, raw, addr string) string {
	t.Helper()
	if cfg, err := mysql.ParseDSN(raw); err == nil && !strings.Contains(raw, "://") {
		cfg.Addr = addr
		return cfg.FormatDSN()
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = addr
	return u.String()
}

// run is one schedlock process.
type run struct {
	cmd            *exec.Cmd
	stdout, stderr lockedBuffer
	began, ended   time.Time
	done           chan struct{}
	code           int
}

// lockedBuffer is a process's output that a test may read while the
// process still writes it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitStderr waits up to timeout for r's stderr to contain want.
func (r *run) waitStderr(t *testing.T, want string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !strings.Contains(r.stderr.String(), want) {
		select {
		case <-r.done:
			t.Fatalf("schedlock %v exited %d before saying %q; stderr: %s", r.cmd.Args[1:], r.code, want, r.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("schedlock %v did not say %q within %s; stderr: %s", r.cmd.Args[1:], want, timeout, r.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// start starts schedlock with args; its process is killed at the end of
// the test if still running, and so is the group of any command it ran.
func start(t *testing.T, dir string, args ...string) *run {
	t.Helper()
	return startArgv(t, dir, binary, args...)
}

// startArgv is start with a program of its own, e.g. a shell that
// prepares the signals schedlock inherits and then execs it.
func startArgv(t *testing.T, dir, program string, args ...string) *run {
	t.Helper()
	r := &run{cmd: exec.Command(program, args...), done: make(chan struct{})}
	r.cmd.Dir = dir
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	r.began = time.Now()
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = r.cmd.Wait()
		r.ended = time.Now()
		r.code = r.cmd.ProcessState.ExitCode()
		if ws, ok := r.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.code = 128 + int(ws.Signal())
		}
		close(r.done)
	}()
	t.Cleanup(func() {
		_ = r.cmd.Process.Kill()
		<-r.done
	})
	return r
}

// wait waits up to timeout for the process to exit and returns its code.
func (r *run) wait(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-r.done:
		return r.code
	case <-time.After(timeout):
		t.Fatalf("schedlock %v still runs after %s; stderr: %s", r.cmd.Args[1:], timeout, r.stderr.String())
		return -1
	}
}

// runOnce runs schedlock with args to completion.
func runOnce(t *testing.T, dir string, args ...string) *run {
	t.Helper()
	r := start(t, dir, args...)
	r.wait(t, 30*time.Second)
	return r
}

// waitFile waits up to timeout for path to exist with content.
func waitFile(t *testing.T, path string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			return string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear within %s", path, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// running reports whether pid is a live process (a zombie is not).
func running(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) == 0 || (fields[0] != "Z" && fields[0] != "X")
}

// killGroupAtEnd kills process group pgid when the test ends.
func killGroupAtEnd(t *testing.T, pgid int) {
	t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
}
