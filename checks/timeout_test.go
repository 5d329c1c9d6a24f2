package checks

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/memory"
)

// hangingBackend is the memory backend whose lockers never return from
// the first acquire of a name containing hang until release is closed,
// whatever their context says, and fail every later one: a backend call
// stuck on a connection that went silent, and then broke.
type hangingBackend struct {
	*memory.Backend
	hang    string
	release chan struct{}
	got     chan struct{} // closed once the stuck acquire returned
	calls   atomic.Int64
}

func (b *hangingBackend) Locker(s dialects.Strategy, t dialects.Table) (dialects.Locker, error) {
	l, err := b.Backend.Locker(s, t)
	if err != nil {
		return nil, err
	}
	return &hangingLocker{creatingLocker: l.(creatingLocker), b: b}, nil
}

type hangingLocker struct {
	creatingLocker
	b *hangingBackend
}

func (l *hangingLocker) Acquire(ctx context.Context, name string, opts dialects.Options) (dialects.Lease, error) {
	if strings.Contains(name, l.b.hang) {
		if l.b.calls.Add(1) > 1 {
			return nil, errors.New("connection reset by peer")
		}
		<-l.b.release
		defer close(l.b.got)
	}
	return l.creatingLocker.Acquire(ctx, name, opts)
}

// TestHungCheckTimesOutAndTheRunGoesOn: a check stuck in a backend call
// that ignores its context fails as timed out at its bound (plus its
// grace), the checks after it run, and the lease it gets once it comes
// unstuck (and then fails, leaving its cleanup to the run) is released,
// not left held.
func TestHungCheckTimesOutAndTheRunGoesOn(t *testing.T) {
	mem, err := memory.Open("hung-" + dialects.NewOwner())
	if err != nil {
		t.Fatal(err)
	}
	b := &hangingBackend{Backend: mem, hang: "-contend", release: make(chan struct{}), got: make(chan struct{})}
	released := false
	unstick := func() {
		if !released {
			released = true
			close(b.release)
		}
	}
	t.Cleanup(unstick)
	// A table of its own that exists before the run, so the run keeps it
	// and what is left held in it can be seen after.
	table := dialects.Table{Name: "hung_jobs"}
	tl, err := mem.Locker(dialects.StrategyTable, table)
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.(dialects.TableCreator).CreateTable(t.Context()); err != nil {
		t.Fatal(err)
	}
	const bound = 300 * time.Millisecond
	cfg := Config{Backend: b, Tables: []dialects.Table{table}, Only: []string{"table.acquire", "table.contend", "table.token"}, CheckTimeout: bound}

	type ran struct {
		rep *Report
		err error
	}
	done := make(chan ran, 1)
	go func() {
		rep, err := Run(t.Context(), cfg)
		done <- ran{rep, err}
	}()
	var r ran
	select {
	case r = <-done:
	case <-time.After(time.Minute): // far beyond the bound and its grace
		t.Fatal("the run waited for the hung check")
	}
	if r.err != nil {
		t.Fatalf("Run: %v", r.err)
	}
	assertCounts(t, r.rep)
	byID := results(r.rep)
	hung := byID["table.contend"]
	if hung.Status != StatusFail || !strings.Contains(hung.Detail, "timed out after 300ms") || !strings.Contains(hung.Detail, "left running") {
		t.Errorf("hung check = %+v; want failed as timed out after 300ms and left running", hung)
	}
	for _, id := range []string{"table.acquire", "table.token"} {
		if res := byID[id]; res.Status != StatusPass {
			t.Errorf("%s = %+v; want it run and passed beside the hung check", id, res)
		}
	}

	unstick() // the stuck acquire returns: its lease must not stay held
	<-b.got
	deadline := time.Now().Add(10 * time.Second)
	for {
		l, err := mem.ListLocks(t.Context(), dialects.ListOptions{Tables: []dialects.Table{table}, All: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Locks) == 0 {
			t.Fatal("no lock was ever taken in the table")
		}
		held := slices.DeleteFunc(l.Locks, func(e dialects.LockEntry) bool { return e.State != dialects.StateHeld })
		if len(held) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the hung check's locks stay held after it came unstuck: %+v", held)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The bound of a check: the configured one, the default when none, twice
// either for a destructive check.
func TestCheckTimeoutOfEachCheck(t *testing.T) {
	mem, err := memory.Open("bounds-" + dialects.NewOwner())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		cfg         time.Duration
		destructive bool
		want        time.Duration
	}{
		{0, false, DefaultCheckTimeout},
		{0, true, 2 * DefaultCheckTimeout},
		{10 * time.Second, false, 10 * time.Second},
		{10 * time.Second, true, 20 * time.Second},
	} {
		r, err := NewRunner(Config{Backend: mem, CheckTimeout: tt.cfg})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Timeout(Check{Destructive: tt.destructive}); got != tt.want {
			t.Errorf("CheckTimeout %s, destructive %v: bound %s, want %s", tt.cfg, tt.destructive, got, tt.want)
		}
	}
}
