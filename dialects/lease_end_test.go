package dialects

import (
	"errors"
	"testing"
	"time"
)

func newTestLeaseEnd(until time.Time) *LeaseEnd {
	e := &LeaseEnd{}
	e.Start(until, func(until time.Time, last error) error {
		if last != nil {
			return errors.Join(ErrLeaseLost, last)
		}
		return ErrLeaseLost
	})
	return e
}

// TestLeaseEndDueWithoutTimer: a lease past its Until is lost for whoever
// asks, though nobody asked for Done (so no timer ran).
func TestLeaseEndDueWithoutTimer(t *testing.T) {
	e := newTestLeaseEnd(time.Now().Add(-time.Millisecond))
	if err := e.Err(); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Err = %v, want ErrLeaseLost", err)
	}
	if ended, err := e.Ended(); !ended || !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Ended = %v, %v", ended, err)
	}
	select {
	case <-e.Done():
	default:
		t.Fatal("Done of an ended lease is not closed")
	}
	if err := e.End(nil); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("End after expiry = %v, want the expiry", err)
	}
	if err := e.Extend(time.Now().Add(time.Hour)); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Extend after expiry = %v, want the expiry", err)
	}
}

// TestLeaseEndDoneClosesAtUntil: Done's timer ends the lease, never
// before Until.
func TestLeaseEndDoneClosesAtUntil(t *testing.T) {
	until := time.Now().Add(20 * time.Millisecond)
	e := newTestLeaseEnd(until)
	select {
	case <-e.Done():
		if time.Now().Before(until) {
			t.Fatal("Done closed before Until")
		}
	case <-time.After(time.Minute):
		t.Fatal("Done did not close after Until")
	}
	if err := e.Err(); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Err = %v", err)
	}
}

// TestLeaseEndExtendMovesTheTimer: a refresh moves Until and the armed
// timer; the expiry quotes the last failed refresh.
func TestLeaseEndExtendMovesTheTimer(t *testing.T) {
	e := newTestLeaseEnd(time.Now().Add(time.Hour))
	done := e.Done()
	failed := errors.New("connection refused")
	if got := e.RefreshFailed(failed); got != failed || e.LastRefreshError() != failed {
		t.Fatal("RefreshFailed does not record the error")
	}
	if err := e.Extend(time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if e.LastRefreshError() != nil {
		t.Fatal("a successful refresh keeps the last failure")
	}
	if err := e.Extend(time.Now().Add(10 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	e.RefreshFailed(failed)
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the re-armed timer did not fire")
	}
	if err := e.Err(); !errors.Is(err, failed) {
		t.Fatalf("expiry = %v, want it to quote the failed refresh", err)
	}
}

// TestLeaseEndRelease: End(nil) is a release: Done closes, Err stays nil,
// a second End keeps the first.
func TestLeaseEndRelease(t *testing.T) {
	e := newTestLeaseEnd(time.Now().Add(time.Hour))
	done := e.Done()
	if err := e.End(nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	default:
		t.Fatal("Done not closed by the release")
	}
	if err := e.End(ErrLeaseLost); err != nil || e.Err() != nil {
		t.Fatal("a later End replaced the release")
	}
	if err := e.Extend(time.Now().Add(time.Hour)); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Extend of a released lease = %v", err)
	}
}

// TestLeaseEndZeroUntil: a zero Until (a Handle's before its first
// refresh) never expires, and Done waits.
func TestLeaseEndZeroUntil(t *testing.T) {
	e := newTestLeaseEnd(time.Time{})
	if ended, _ := e.Ended(); ended {
		t.Fatal("a zero Until ended the lease")
	}
	select {
	case <-e.Done():
		t.Fatal("Done closed for a zero Until")
	default:
	}
	if err := e.Extend(time.Now().Add(-time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := e.Err(); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("a past Until did not end the lease: %v", err)
	}
}

// TestLeaseEndOnEnd: the hook runs once however the lease ends — by its
// timer, or by End, a second End running nothing — after Done is closed
// and outside the LeaseEnd's lock (it reads the lease, which would
// deadlock under it).
func TestLeaseEndOnEnd(t *testing.T) {
	for _, tc := range []struct {
		name  string
		until time.Time
		end   func(e *LeaseEnd)
		want  error
	}{
		{"timer", time.Now().Add(10 * time.Millisecond), func(e *LeaseEnd) { e.Done() }, ErrLeaseLost},
		{"release", time.Now().Add(time.Hour), func(e *LeaseEnd) { e.End(nil); e.End(ErrLeaseLost) }, nil},
		{"due when asked", time.Now().Add(-time.Millisecond), func(e *LeaseEnd) { e.Ended() }, ErrLeaseLost},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newTestLeaseEnd(tc.until)
			ran := make(chan error, 2)
			e.OnEnd(func() {
				select {
				case <-e.Done():
				default:
					t.Error("the hook ran before Done was closed")
				}
				ran <- e.Err()
			})
			tc.end(e)
			select {
			case err := <-ran:
				if !errors.Is(err, tc.want) {
					t.Fatalf("the hook saw Err %v, want %v", err, tc.want)
				}
			case <-time.After(time.Minute):
				t.Fatal("the hook did not run")
			}
			e.End(nil)
			e.Err()
			select {
			case err := <-ran:
				t.Fatalf("the hook ran again (Err %v)", err)
			default:
			}
		})
	}
}
