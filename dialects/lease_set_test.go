package dialects

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestLeaseSetClose: Close ends each tracked lease once, outside the set's
// lock (an end that untracks itself does not deadlock), Track refuses
// afterwards, and a second Close ends nothing.
func TestLeaseSetClose(t *testing.T) {
	var s LeaseSet[*LeaseEnd]
	var es []*LeaseEnd
	for range 3 {
		e := newTestLeaseEnd(time.Now().Add(time.Hour))
		e.OnEnd(func() { s.Untrack(e) })
		if !s.Track(e) {
			t.Fatal("Track refused on an open set")
		}
		es = append(es, e)
	}
	s.Untrack(es[2])
	ended := 0
	if !s.Close(func(e *LeaseEnd) { ended++; e.End(BackendClosed()) }) {
		t.Fatal("the first Close reported the set closed already")
	}
	if ended != 2 || s.Len() != 0 {
		t.Fatalf("Close ended %d leases and left %d, want 2 and 0", ended, s.Len())
	}
	for _, e := range es[:2] {
		if err := e.Err(); !errors.Is(err, ErrLeaseLost) || !strings.Contains(err.Error(), "the backend was closed") {
			t.Fatalf("a closed backend's lease: %v", err)
		}
	}
	if err := es[2].Err(); err != nil {
		t.Fatalf("an untracked lease was ended by Close: %v", err)
	}
	if s.Track(newTestLeaseEnd(time.Time{})) || s.TrackSweeping(newTestLeaseEnd(time.Time{}), func(*LeaseEnd) bool { return false }) {
		t.Fatal("Track took a lease after Close")
	}
	if s.Close(func(*LeaseEnd) { t.Fatal("the second Close ended a lease") }) {
		t.Fatal("the second Close reported the set open")
	}
}

// TestLeaseSetSweep: TrackSweeping drops the leases that ended unwatched,
// asking outside the set's lock (an expiry whose OnEnd untracks the lease
// does not deadlock), and keeps the live ones.
func TestLeaseSetSweep(t *testing.T) {
	var s LeaseSet[*LeaseEnd]
	for i := range 80 {
		until := time.Now().Add(time.Hour)
		if i%2 == 0 {
			until = time.Now().Add(-time.Millisecond) // due: Ended expires it
		}
		e := newTestLeaseEnd(until)
		e.OnEnd(func() { s.Untrack(e) })
		if !s.Track(e) {
			t.Fatal("Track refused on an open set")
		}
	}
	ended := func(e *LeaseEnd) bool { ok, _ := e.Ended(); return ok }
	if !s.TrackSweeping(newTestLeaseEnd(time.Now().Add(time.Hour)), ended) {
		t.Fatal("TrackSweeping refused on an open set")
	}
	if n := s.Len(); n != 41 {
		t.Fatalf("%d leases after the sweep, want the 40 live ones and the new one", n)
	}
	if live := s.Matching(func(e *LeaseEnd) bool { return e.Until().After(time.Now()) }); len(live) != 41 {
		t.Fatalf("Matching found %d live leases, want 41", len(live))
	}
}

// TestLeaseOnlyLocker: the session strategy is unsupported with the
// backend's sentence and the table remedy, an unknown one invalid, and
// the table strategy the lease locker.
func TestLeaseOnlyLocker(t *testing.T) {
	calls := 0
	lease := func(Table) (LeaseLocker, error) { calls++; return nil, errors.New("no table") }
	_, err := LeaseOnlyLocker("store", "Store has no session locks; its locks are leases (the table strategy)", StrategySession, Table{}, lease)
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "Store has no session locks; its locks are leases (the table strategy)") {
		t.Fatalf("session: %v", err)
	}
	if r, ok := RemedyOf(err); !ok || r != UseTableStrategy {
		t.Fatalf("session remedy: %v, %v", r, ok)
	}
	if _, err := LeaseOnlyLocker("store", "", "advisory", Table{}, lease); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `unknown strategy "advisory": use session or table`) {
		t.Fatalf("unknown: %v", err)
	}
	if calls != 0 {
		t.Fatal("the lease locker was asked for a strategy other than table")
	}
	if l, err := LeaseOnlyLocker("store", "", StrategyTable, Table{}, lease); l != nil || err == nil || err.Error() != "no table" || calls != 1 {
		t.Fatalf("table: %v, %v", l, err)
	}
}
