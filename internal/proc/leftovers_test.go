//go:build unix

package proc

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A child that exits at once but leaves a background job in its group:
// Supervise must stop the job before it returns, so that nothing of the
// job runs once the lock is released.
func TestSuperviseStopsLeftovers(t *testing.T) {
	out := &syncBuffer{}
	c, err := Start([]string{"sh", "-c", `sleep 60 & echo $!`}, nil, IO{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	got := Supervise(c, Watch{Grace: time.Second})
	if got.Stopped || got.ExitCode != 0 || !got.Leftovers {
		t.Fatalf("outcome %+v, want exit 0 with leftovers stopped", got)
	}
	job, err := strconv.Atoi(strings.TrimSpace(out.String()))
	if err != nil {
		t.Fatalf("background job pid: %q", out.String())
	}
	if alive(job) {
		t.Fatalf("background job %d still runs after Supervise returned", job)
	}
	if c.GroupRunning() {
		t.Fatal("GroupRunning is true after Supervise returned")
	}
}

// A background job that ignores SIGTERM is killed when the grace runs out.
func TestStopAfterExitKillsStubbornLeftovers(t *testing.T) {
	out := &syncBuffer{}
	c, err := Start([]string{"sh", "-c", `trap '' TERM; sleep 60 & echo $!`}, nil, IO{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if code := c.ExitCode(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	if !c.GroupRunning() {
		t.Fatal("GroupRunning is false while the background job runs")
	}
	start := time.Now()
	c.Stop(300 * time.Millisecond)
	if d := time.Since(start); d < 250*time.Millisecond || d > 3*time.Second {
		t.Fatalf("Stop took %s, want about the grace period", d)
	}
	job, _ := strconv.Atoi(strings.TrimSpace(out.String()))
	if job == 0 || alive(job) {
		t.Fatalf("background job %q survived Stop", out.String())
	}
}

func TestSuperviseWithoutLeftovers(t *testing.T) {
	c, err := Start([]string{"sh", "-c", "exit 3"}, nil, IO{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got := Supervise(c, Watch{Grace: 5 * time.Second})
	if got.Leftovers || got.ExitCode != 3 || time.Since(start) > time.Second {
		t.Fatalf("outcome %+v after %s, want exit 3 at once and no leftovers", got, time.Since(start))
	}
}

// With KillOnLoss (a session lock), what a child that exited cleanly left
// in its group still gets SIGTERM and the grace to handle it (here a
// cleanup of 0.3 s): the lock is
// held until they are gone.
func TestLeftoversOfSessionLockGetTheGrace(t *testing.T) {
	dir := t.TempDir()
	ready, termed := dir+"/ready", dir+"/termed"
	script := `( trap 'sleep 0.3; echo term > ` + termed + `; exit 0' TERM; echo > ` + ready + `; sleep 60 & wait ) &
while [ ! -f ` + ready + ` ]; do sleep 0.01; done`
	c, err := Start([]string{"sh", "-c", script}, nil, IO{})
	if err != nil {
		t.Fatal(err)
	}
	got := Supervise(c, Watch{Grace: 30 * time.Second, KillOnLoss: true, Lost: make(chan struct{})})
	if got.Stopped || got.ExitCode != 0 || !got.Leftovers {
		t.Fatalf("outcome %+v, want exit 0 with leftovers stopped", got)
	}
	if !fileExists(termed) {
		t.Fatal("the leftover was killed without the grace to handle SIGTERM")
	}
	if c.GroupRunning() {
		t.Fatal("GroupRunning is true after Supervise returned")
	}
}

// With KillOnLoss, a loss while leftovers are given their grace kills them
// at once: the server has freed the lock.
func TestLossKillsSessionLeftoversAtOnce(t *testing.T) {
	out := &syncBuffer{}
	c, err := Start([]string{"sh", "-c", `trap '' TERM; sleep 120 & echo $!`}, nil, IO{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	lost := make(chan struct{})
	time.AfterFunc(300*time.Millisecond, func() { close(lost) })
	start := time.Now()
	got := Supervise(c, Watch{Grace: 60 * time.Second, KillOnLoss: true, Lost: lost})
	if took := time.Since(start); took > 20*time.Second {
		t.Fatalf("Supervise took %s: the loss did not cut the 60s grace short", took)
	}
	if !got.Leftovers {
		t.Fatalf("outcome %+v, want leftovers", got)
	}
	job, _ := strconv.Atoi(strings.TrimSpace(out.String()))
	if job == 0 || alive(job) {
		t.Fatalf("background job %q survived", out.String())
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
