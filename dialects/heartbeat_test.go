package dialects

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestHeartbeatRoundTrip(t *testing.T) {
	cases := []Heartbeat{
		{Every: 10 * time.Minute, Lease: 30 * time.Minute},
		{Every: time.Second, Lease: 3 * time.Second, AtLeast: 2 * time.Second},
		{Every: time.Second / 3, Lease: time.Second},
		{Every: 1500 * time.Millisecond, Lease: 4500 * time.Millisecond, AtLeast: 90 * time.Second},
	}
	for _, hb := range cases {
		owner := WithHeartbeat("web-3:4711:9f1c2a7b", hb)
		if !strings.HasPrefix(owner, "web-3:4711:9f1c2a7b"+HeartbeatMark) {
			t.Fatalf("%+v: owner %q", hb, owner)
		}
		got, ok := ParseHeartbeat(owner)
		if !ok || got != hb {
			t.Errorf("%q reads back as %+v, %v; want %+v", owner, got, ok, hb)
		}
		if again := WithHeartbeat(owner, Heartbeat{Every: time.Hour, Lease: 3 * time.Hour}); again != owner {
			t.Errorf("a second declaration changed %q to %q", owner, again)
		}
		if err := CheckOwner(owner); err != nil {
			t.Errorf("%q: %v", owner, err)
		}
	}
	if got := WithHeartbeat("web-3:4711:9f1c2a7b", Heartbeat{Every: 10 * time.Minute, Lease: 30 * time.Minute}); got != "web-3:4711:9f1c2a7b;hb=10m/30m" {
		t.Errorf("owner %q", got)
	}
	long := strings.Repeat("h", MaxOwnerBytes-5)
	if got := WithHeartbeat(long, Heartbeat{Every: time.Second, Lease: 3 * time.Second}); got != long {
		t.Errorf("an owner near the limit grew to %d bytes", len(got))
	}
	for _, owner := range []string{"web-3", "web-3:4711:9f1c2a7b", "x;hb=", "x;hb=1s", "x;hb=1s/x", "x;hb=0s/3s", "x;hb=1s/-3s", "x;hb=1s/3s/2s/1s", "paused:ops"} {
		if hb, ok := ParseHeartbeat(owner); ok {
			t.Errorf("%q declares %+v", owner, hb)
		}
	}
}

// A row whose owner is on another host: only its heartbeat can make it
// stale.
func TestStaleReasonHeartbeat(t *testing.T) {
	now := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	owner := WithHeartbeat("elsewhere-9:4711:9f1c2a7b", Heartbeat{Every: 10 * time.Second, Lease: 30 * time.Second})
	row := func(lastRefresh time.Duration) Row {
		return Row{Owner: owner, LockedAt: now.Add(-time.Hour), Until: now.Add(-lastRefresh + 30*time.Second), DBNow: now}
	}
	cases := []struct {
		since time.Duration // since the last refresh
		want  LockState
	}{
		{0, StateHeld},
		{10 * time.Second, StateHeld},
		{20 * time.Second, StateHeld}, // exactly two intervals: not yet
		{20*time.Second + time.Millisecond, StateStale},
		{29 * time.Second, StateStale},
		{30 * time.Second, StateExpired}, // the lease has ended
	}
	for _, tc := range cases {
		r := row(tc.since)
		if got := TableRowState(r); got != tc.want {
			t.Errorf("%s after the last refresh: %s, want %s", tc.since, got, tc.want)
		}
		var e LockEntry
		e.SetRowState(r)
		if (e.StaleReason != "") != (tc.want == StateStale) {
			t.Errorf("%s after the last refresh: reason %q in state %s", tc.since, e.StaleReason, e.State)
		}
		if tc.want != StateExpired && (!e.LastRefresh.Equal(now.Add(-tc.since)) || e.RefreshEvery != 10*time.Second) {
			t.Errorf("%s after the last refresh: last refresh %s every %s", tc.since, e.LastRefresh, e.RefreshEvery)
		}
	}
	if got := StaleReason(row(25 * time.Second)); !strings.Contains(got, "no refresh for 25s") {
		t.Errorf("reason %q", got)
	}
	// Without a declaration nothing tells: held until the lease ends.
	r := row(25 * time.Second)
	r.Owner = "elsewhere-9:4711:9f1c2a7b"
	if got := TableRowState(r); got != StateHeld {
		t.Errorf("no heartbeat declared: %s", got)
	}
	// A pause stays a pause.
	r.Owner = PauseOwner("ops" + HeartbeatMark + "1s/3s")
	if got := TableRowState(r); got != StatePaused {
		t.Errorf("pause: %s", got)
	}
	// Times a host estimated (etcd) are not judged.
	r = row(25 * time.Second)
	r.HostTimes = true
	if got := TableRowState(r); got != StateHeld {
		t.Errorf("host times: %s", got)
	}
}

// After an early release the lease runs on to locked-at + at-least with no
// refresh, by design: held, not stale — even with the process gone.
func TestStaleReasonAtLeast(t *testing.T) {
	now := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	gone := deadPid(t)
	owner := WithHeartbeat(thisHost(t)+":"+strconv.Itoa(gone)+":9f1c2a7b", Heartbeat{Every: 10 * time.Second, Lease: 30 * time.Second, AtLeast: 25 * time.Second})
	lockedAt := now.Add(-20 * time.Second)
	kept := Row{Owner: owner, LockedAt: lockedAt, Until: lockedAt.Add(25 * time.Second), DBNow: now}
	if got := TableRowState(kept); got != StateHeld {
		t.Errorf("kept by at-least: %s (%s)", got, StaleReason(kept))
	}
	// The same process died holding the lease it refreshed 25s ago.
	dead := Row{Owner: owner, LockedAt: lockedAt.Add(-time.Minute), Until: now.Add(5 * time.Second), DBNow: now}
	if got := TableRowState(dead); got != StateStale {
		t.Errorf("died holding: %s", got)
	}
}

func TestOwnerProcessGone(t *testing.T) {
	host := thisHost(t)
	gone := deadPid(t)
	cases := []struct {
		owner string
		want  bool
	}{
		{host + ":" + strconv.Itoa(os.Getpid()) + ":9f1c2a7b", false},
		{host + ":" + strconv.Itoa(gone) + ":9f1c2a7b", true},
		{host + ":" + strconv.Itoa(gone) + ":9f1c2a7b;hb=1s/3s", true},
		{"not-" + host + ":" + strconv.Itoa(gone) + ":9f1c2a7b", false},
		{host + ":0" + strconv.Itoa(gone) + ":9f1c2a7b", false},
		{host + ":" + strconv.Itoa(gone), false},
		{host, false},
		{"", false},
	}
	for _, tc := range cases {
		pid, got := OwnerProcessGone(tc.owner)
		if got != tc.want || (got && pid != gone) {
			t.Errorf("%q: %d, %v; want %v", tc.owner, pid, got, tc.want)
		}
	}
	now := time.Now().UTC()
	r := Row{Owner: host + ":" + strconv.Itoa(gone) + ":9f1c2a7b", LockedAt: now, Until: now.Add(time.Hour), DBNow: now}
	if got := TableRowState(r); got != StateStale {
		t.Errorf("owner process gone: %s", got)
	}
	if got := StaleReason(r); !strings.Contains(got, strconv.Itoa(gone)) {
		t.Errorf("reason %q", got)
	}
	r.Owner = host + ":" + strconv.Itoa(os.Getpid()) + ":9f1c2a7b"
	if got := TableRowState(r); got != StateHeld {
		t.Errorf("owner process runs: %s", got)
	}
}

// WithLock's generated owner declares the refreshes it sends; an owner
// given is recorded as given.
func TestWithLockDeclaresHeartbeat(t *testing.T) {
	m := newMemLocker()
	var owner string
	err := WithLock(context.Background(), m, "job", Options{AtMost: 3 * time.Second, AtLeast: time.Second}, func(_ context.Context, l Lease) error {
		owner = l.Owner()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	hb, ok := ParseHeartbeat(owner)
	if want := (Heartbeat{Every: time.Second, Lease: 3 * time.Second, AtLeast: time.Second}); !ok || hb != want {
		t.Errorf("owner %q declares %+v, %v; want %+v", owner, hb, ok, want)
	}
	if _, gone := OwnerProcessGone(owner); gone {
		t.Errorf("owner %q: this process reads as gone", owner)
	}
	err = WithLock(context.Background(), m, "job", Options{Owner: "me"}, func(_ context.Context, l Lease) error {
		owner = l.Owner()
		return nil
	})
	if err != nil || owner != "me" {
		t.Errorf("owner %q, %v", owner, err)
	}
}

func thisHost(t *testing.T) string {
	t.Helper()
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// deadPid is the pid of a process that ran and was reaped.
func deadPid(t *testing.T) int {
	t.Helper()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	return c.Process.Pid
}
