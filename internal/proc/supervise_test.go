//go:build unix

package proc

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// TestSuperviseStopsBeforeLeaseEnd: a child that ignores SIGTERM is
// killed inside the last two ticks of its lease, and has been reaped
// before the lease ends. The kill cannot come earlier: Supervise sends
// SIGTERM once the lease end is within Grace and two ticks, and SIGKILL
// two ticks before it. The two ticks (here 300 ms) are the margin a busy
// machine has to deliver SIGKILL and reap the child.
func TestSuperviseStopsBeforeLeaseEnd(t *testing.T) {
	c, err := Start([]string{"sh", "-c", "trap '' TERM; sleep 30"}, nil, IO{})
	if err != nil {
		t.Fatal(err)
	}
	const tick = 150 * time.Millisecond
	until := time.Now().Add(1500 * time.Millisecond)
	reaped := make(chan time.Time, 1)
	go func() {
		<-c.Done()
		reaped <- time.Now()
	}()
	out := Supervise(c, Watch{Until: func() time.Time { return until }, Grace: 500 * time.Millisecond, Tick: tick})
	if !out.Stopped || out.ExitCode != 128+int(syscall.SIGKILL) {
		t.Fatalf("outcome %+v, want stopped by SIGKILL (the child ignores SIGTERM)", out)
	}
	at := <-reaped
	if earliest := until.Add(-2 * tick); at.Before(earliest) {
		t.Errorf("child killed %s before the end of its lease, earlier than the two ticks (%s) of margin", until.Sub(at), 2*tick)
	}
	if !at.Before(until) {
		t.Errorf("child reaped %s after the lease end", at.Sub(until))
	}
	t.Logf("child reaped %s before the lease end (kill planned %s before it)", until.Sub(at), 2*tick)
}

func TestSuperviseStopsOnLoss(t *testing.T) {
	c, err := Start([]string{"sleep", "30"}, nil, IO{})
	if err != nil {
		t.Fatal(err)
	}
	lost := make(chan struct{})
	time.AfterFunc(100*time.Millisecond, func() { close(lost) })
	out := Supervise(c, Watch{Lost: lost, Grace: time.Second})
	if !out.Stopped || out.ExitCode != 128+int(syscall.SIGTERM) {
		t.Fatalf("outcome %+v, want stopped by SIGTERM", out)
	}
}

func TestSuperviseForwardsSignals(t *testing.T) {
	c, err := Start([]string{"sh", "-c", "trap 'exit 42' INT; sleep 30 & wait"}, nil, IO{})
	if err != nil {
		t.Fatal(err)
	}
	sigs := make(chan os.Signal, 1)
	time.AfterFunc(200*time.Millisecond, func() { sigs <- syscall.SIGINT })
	out := Supervise(c, Watch{Signals: sigs, Grace: time.Second})
	if out.Stopped || out.ExitCode != 42 || out.Forwarded != syscall.SIGINT {
		t.Fatalf("outcome %+v, want exit 42 after a forwarded SIGINT", out)
	}
}
