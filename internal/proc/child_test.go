//go:build unix

package proc

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

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

// alive reports whether pid runs; a zombie (exited, not yet reaped by an
// init that does not reap) counts as gone.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no procfs: trust kill(0)
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) == 0 || fields[0] != "Z"
}

func TestExitCodePassesThrough(t *testing.T) {
	var out bytes.Buffer
	c, err := Start([]string{"sh", "-c", "echo hi; exit 7"}, nil, IO{Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.ExitCode(); got != 7 {
		t.Fatalf("exit code %d, want 7", got)
	}
	if out.String() != "hi\n" {
		t.Fatalf("stdout %q", out.String())
	}
}

func TestEnvIsExported(t *testing.T) {
	var out bytes.Buffer
	c, err := Start([]string{"sh", "-c", `printf %s "$SCHEDLOCK_LOCK_NAME"`}, []string{"SCHEDLOCK_LOCK_NAME=nightly"}, IO{Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	c.ExitCode()
	if out.String() != "nightly" {
		t.Fatalf("child saw %q", out.String())
	}
}

func TestMissingCommandIs127(t *testing.T) {
	_, err := Start([]string{"schedlock-no-such-command"}, nil, IO{})
	var se *StartError
	if !errors.As(err, &se) || se.Code != ExitNotFound {
		t.Fatalf("got %v, want StartError 127", err)
	}
}

func TestNotExecutableIs126(t *testing.T) {
	path := t.TempDir() + "/script"
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Start([]string{path}, nil, IO{})
	var se *StartError
	if !errors.As(err, &se) || se.Code != ExitNotExecutable {
		t.Fatalf("got %v, want StartError 126", err)
	}
}

// Stop must end the whole process group, grandchildren included, and
// escalate to SIGKILL when SIGTERM is ignored.
func TestStopKillsTheGroup(t *testing.T) {
	out := &syncBuffer{}
	c, err := Start([]string{"sh", "-c", `trap '' TERM; sleep 60 & echo $!; wait`}, nil, IO{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), "\n") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	grandchild, err := strconv.Atoi(strings.TrimSpace(out.String()))
	if err != nil {
		t.Fatalf("grandchild pid: %q", out.String())
	}
	start := time.Now()
	c.Stop(300 * time.Millisecond)
	if d := time.Since(start); d < 250*time.Millisecond || d > 5*time.Second {
		t.Fatalf("Stop took %s, want about the grace period", d)
	}
	if got := c.ExitCode(); got != 128+int(syscall.SIGKILL) {
		t.Fatalf("exit code %d, want %d", got, 128+int(syscall.SIGKILL))
	}
	for i := 0; i < 100; i++ {
		if !alive(grandchild) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("grandchild %d survived Stop", grandchild)
}

func TestSignalReachesChild(t *testing.T) {
	c, err := Start([]string{"sleep", "30"}, nil, IO{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if err := c.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if got := c.ExitCode(); got != 128+int(syscall.SIGTERM) {
		t.Fatalf("exit code %d, want %d", got, 128+int(syscall.SIGTERM))
	}
}
