//go:build unix

package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// hookScript is an end hook that records its pid in hook.pid and then
// sleeps for ten minutes: a step after the command that would block.
const hookScript = `echo $$ > hook.tmp && mv hook.tmp hook.pid; exec sleep 600`

// waitPid waits for the pid a script wrote to path.
func waitPid(t *testing.T, path string) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(waitFile(t, path, 30*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// SIGTERM ends run while a step after its command would still wait (an
// end hook allowed an hour): run exits with the command's code, and the
// hook is killed. That holds for a first SIGTERM that comes once the
// command has ended, and for a second one when the first went to the
// command.
func TestRunSignalAfterCommandEndsIt(t *testing.T) {
	cases := []struct {
		name, script string
		// termFirst: a SIGTERM goes to the command (which exits 0 on it)
		// before the one that must end the hook.
		termFirst bool
	}{
		{"signal once the command has ended", `exit 0`, false},
		{"second signal, the first to the command", `trap 'exit 0' TERM; echo $$ > child; while :; do sleep 0.05; done`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newBackend(t, sqliteDSN(t), dialects.StrategyTable)
			dir := t.TempDir()
			r := start(t, dir, runArgs(b, lockName("after"), c.script, "--hook-timeout", "1h", "--on-success", hookScript)...)
			if c.termFirst {
				killGroupAtEnd(t, waitPid(t, filepath.Join(dir, "child")))
				if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
			}
			hook := waitPid(t, filepath.Join(dir, "hook.pid"))
			killGroupAtEnd(t, hook)
			if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if code := r.wait(t, 30*time.Second); code != 0 {
				t.Errorf("exit %d, want the command's 0; stderr: %s", code, r.stderr.String())
			}
			if !strings.Contains(r.stderr.String(), "abandoned") {
				t.Errorf("stderr does not say the hook was abandoned: %s", r.stderr.String())
			}
			if running(hook) {
				t.Errorf("the end hook (pid %d) still runs after run exited", hook)
			}
		})
	}
}

// A FIFO given as --metrics-textfile is refused before the command runs:
// run exits with the command's code instead of waiting for a reader, and
// the FIFO stays a FIFO.
func TestRunMetricsTextfileFIFODoesNotHang(t *testing.T) {
	b := newBackend(t, sqliteDSN(t), dialects.StrategyTable)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "schedlock.prom")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	r := start(t, dir, runArgs(b, lockName("fifo"), "exit 6", "--metrics-textfile", fifo)...)
	if code := r.wait(t, 30*time.Second); code != 6 {
		t.Errorf("exit %d, want the command's 6; stderr: %s", code, r.stderr.String())
	}
	if !strings.Contains(r.stderr.String(), "is a named pipe") {
		t.Errorf("stderr does not refuse the FIFO: %s", r.stderr.String())
	}
	fi, err := os.Lstat(fifo)
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("%s is now %v (%v), want the FIFO", fifo, fi.Mode(), err)
	}
	if _, err := os.Lstat(filepath.Join(dir, ".schedlock.prom.lock")); err == nil {
		t.Error("a lock file was created beside the refused FIFO")
	}
}
