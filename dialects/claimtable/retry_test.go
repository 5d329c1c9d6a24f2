package claimtable

import (
	"context"
	"errors"
	"testing"
)

// errAborted stands for a server's "aborted, send it again" error.
var errAborted = errors.New("serialization failure (40001)")

// retryingBuilder retries errAborted; its other methods are never called.
type retryingBuilder struct{ Builder }

func (retryingBuilder) IsRetryable(err error) bool { return errors.Is(err, errAborted) }

// flaky returns a send that fails with errs[i] on its i-th call (nil once
// errs run out), and the number of calls made.
func flaky(errs ...error) (func() error, *int) {
	n := 0
	return func() error {
		n++
		if n <= len(errs) {
			return errs[n-1]
		}
		return nil
	}, &n
}

func TestRetryingSendsAgainAfterRetryableErrors(t *testing.T) {
	cl := &Claimer{b: retryingBuilder{}}
	send, n := flaky(errAborted, errAborted)
	if err := cl.retrying(context.Background(), send); err != nil {
		t.Fatalf("after two retryable failures: %v", err)
	}
	if *n != 3 {
		t.Errorf("sent %d times, want 3", *n)
	}
}

func TestRetryingIsBounded(t *testing.T) {
	cl := &Claimer{b: retryingBuilder{}}
	errs := make([]error, 100)
	for i := range errs {
		errs[i] = errAborted
	}
	send, n := flaky(errs...)
	if err := cl.retrying(context.Background(), send); err != errAborted {
		t.Fatalf("error = %v, want the statement's own error", err)
	}
	if *n != maxRetries+1 {
		t.Errorf("sent %d times, want %d", *n, maxRetries+1)
	}
}

func TestRetryingReturnsOtherErrorsAtOnce(t *testing.T) {
	other := errors.New("syntax error")
	cl := &Claimer{b: retryingBuilder{}}
	send, n := flaky(errAborted, other, errAborted)
	if err := cl.retrying(context.Background(), send); err != other {
		t.Fatalf("error = %v, want %v", err, other)
	}
	if *n != 2 {
		t.Errorf("sent %d times, want 2", *n)
	}
}

func TestRetryingWithoutRetrierSendsOnce(t *testing.T) {
	cl := &Claimer{}
	send, n := flaky(errAborted)
	if err := cl.retrying(context.Background(), send); err != errAborted {
		t.Fatalf("error = %v, want %v", err, errAborted)
	}
	if *n != 1 {
		t.Errorf("sent %d times, want 1", *n)
	}
}

func TestRetryingStopsWithTheContext(t *testing.T) {
	cl := &Claimer{b: retryingBuilder{}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	send, n := flaky(errAborted, errAborted)
	if err := cl.retrying(ctx, send); err != errAborted {
		t.Fatalf("error = %v, want the statement's last error", err)
	}
	if *n != 1 {
		t.Errorf("sent %d times after the context ended, want 1", *n)
	}
}
