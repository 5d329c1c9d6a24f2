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
