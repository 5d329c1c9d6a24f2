//go:build unix

package proc

import (
	"os"
	"syscall"
	"testing"
	"time"
)

func TestSuperviseStopsBeforeLeaseEnd(t *testing.T) {
	c, err := Start([]string{"sh", "-c", "trap '' TERM; sleep 30"}, nil, IO{})
	if err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(600 * time.Millisecond)
	out := Supervise(c, Watch{Until: func() time.Time { return until }, Grace: 300 * time.Millisecond})
	if !out.Stopped {
		t.Fatal("child was not stopped")
	}
	if now := time.Now(); now.After(until) {
		t.Fatalf("child ended %s after the lease end", now.Sub(until))
	}
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
