package dialects

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestRetryAcquireWaitsOutHeldAndUnavailableOnly(t *testing.T) {
	down := errors.New("connection refused")
	opts := Options{Wait: time.Minute, RetryEvery: time.Millisecond}
	for _, c := range []struct {
		name  string
		fails []error // the tries' errors before one succeeds
		tries int     // tries made
		err   error   // what RetryAcquire returns
	}{
		{"held, then free", []error{&HeldError{Name: "a", Holder: "x"}, &HeldError{Name: "a", Holder: "x"}}, 3, nil},
		{"unavailable, then free", []error{down, down}, 3, nil},
		{"a pause is not waited out", []error{&HeldError{Name: "a", Holder: PauseOwner("ops")}}, 1, ErrPaused},
		{"another error is final", []error{ErrInvalid}, 1, ErrInvalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			tries := 0
			_, err := RetryAcquire(context.Background(), opts, func() (Lease, error) {
				tries++
				if tries <= len(c.fails) {
					return nil, c.fails[tries-1]
				}
				return nil, nil
			}, func(err error) bool { return errors.Is(err, down) })
			if tries != c.tries || c.err == nil && err != nil || c.err != nil && !errors.Is(err, c.err) {
				t.Errorf("%d tries, %v; want %d tries, %v", tries, err, c.tries, c.err)
			}
		})
	}
}

func TestRetryAcquireStopsAtTheWaitOrTheContext(t *testing.T) {
	held := &HeldError{Name: "a", Holder: "x"}
	always := func() (Lease, error) { return nil, held }
	if _, err := RetryAcquire(context.Background(), Options{Wait: 20 * time.Millisecond, RetryEvery: time.Millisecond}, always, nil); !errors.Is(err, ErrHeld) {
		t.Errorf("after the wait: %v, want the last refusal", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := RetryAcquire(ctx, Options{Wait: time.Hour, RetryEvery: time.Millisecond}, always, nil)
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrHeld) {
		t.Errorf("after the context ended: %v, want the context's error quoting the last try", err)
	}
}

// A woken wait tries again when the store reports a release, not after
// RetryEvery (an hour here): after the first refusal it watches, tries
// once more at once, and then waits for the wake-up.
func TestRetryAcquireWokenTriesOnTheWakeup(t *testing.T) {
	held := &HeldError{Name: "a", Holder: "x"}
	woken := make(chan struct{}, 1)
	watched, stopped, tries := 0, 0, 0
	watch := func(context.Context) (Wakeup, error) {
		watched++
		return Wakeup{Woken: woken, Stop: func() { stopped++ }}, nil
	}
	try := func() (Lease, error) {
		tries++
		switch tries {
		case 1, 2:
			if tries == 2 {
				woken <- struct{}{} // the release, reported while the lock is still refused
			}
			return nil, held
		}
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := RetryAcquireWoken(ctx, Options{Wait: time.Hour, RetryEvery: time.Hour}, try, nil, watch)
	if err != nil || tries != 3 || watched != 1 || stopped != 1 {
		t.Errorf("err %v after %d tries, %d watches, %d stops; want the lock on the third try, one watch stopped once", err, tries, watched, stopped)
	}
}

// A watch that fails leaves the poll; the refused lease's end, when
// ahead, ends a pause before RetryEvery (an hour here).
func TestRetryAcquireWokenFallsBackToThePollAndTheLeaseEnd(t *testing.T) {
	tries := 0
	try := func() (Lease, error) {
		tries++
		if tries == 1 {
			return nil, &HeldError{Name: "a", Holder: "x", Until: time.Now().Add(20 * time.Millisecond)}
		}
		return nil, nil
	}
	failing := func(context.Context) (Wakeup, error) { return Wakeup{}, errors.New("no subscriptions here") }
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := RetryAcquireWoken(ctx, Options{Wait: time.Hour, RetryEvery: time.Millisecond}, try, nil, failing)
	if err != nil || tries != 2 {
		t.Errorf("failed watch: err %v after %d tries, want the lock on the second (polled) try", err, tries)
	}
	tries = 0
	never := func(context.Context) (Wakeup, error) { return Wakeup{Woken: make(chan struct{}), Stop: func() {}}, nil }
	try = func() (Lease, error) {
		tries++
		if tries <= 2 {
			return nil, &HeldError{Name: "a", Holder: "x", Until: time.Now().Add(20 * time.Millisecond)}
		}
		return nil, nil
	}
	_, err = RetryAcquireWoken(ctx, Options{Wait: time.Hour, RetryEvery: time.Hour}, try, nil, never)
	if err != nil || tries != 3 {
		t.Errorf("lease end: err %v after %d tries, want the lock on the third try, at the refused lease's end", err, tries)
	}
}
