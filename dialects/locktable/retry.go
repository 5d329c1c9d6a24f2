package locktable

import (
	"context"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v5"
)

// Retrier is optionally implemented by a Builder whose database can abort a
// statement with an error that means "nothing was done, send it again":
// CockroachDB's and YugabyteDB's SQLSTATE 40001 (serialization failure)
// under their default SERIALIZABLE isolation. Every statement of the engine
// runs alone in autocommit, so an aborted one changed nothing and sending it
// again is safe; the engine does so at most MaxRetries times, pausing
// RetryPause, then twice that, and so on (with up to 50% jitter), and stops
// early when the context ends. An error that is not retryable, or the last
// retryable one, is returned as it is.
type Retrier interface {
	IsRetryable(err error) bool
}

// MaxRetries bounds how many times the engine sends a statement again
// after a retryable error (so a statement is sent at most MaxRetries+1
// times).
const MaxRetries = 4

// RetryPause is the pause before the first retry; it doubles on each
// further one.
const RetryPause = 5 * time.Millisecond

// retryBackOff pauses RetryPause, then twice that, and so on, each pause
// drawn from [p, 1.5p]: an interval of 1.25p randomized by ±20%.
func retryBackOff() backoff.BackOff {
	return &backoff.ExponentialBackOff{
		InitialInterval:     RetryPause * 5 / 4,
		RandomizationFactor: 0.2,
		Multiplier:          2,
		MaxInterval:         time.Minute,
	}
}

// retrying runs send, and again while it fails with an error the builder
// calls retryable, at most MaxRetries more times. When the context ends
// during a pause it returns the statement's last error.
func (l *Locker) retrying(ctx context.Context, send func() error) error {
	r, ok := l.b.(Retrier)
	if !ok {
		return send()
	}
	tries := 0
	var last error
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		tries++
		last = send()
		if last != nil && !r.IsRetryable(last) {
			return struct{}{}, backoff.Permanent(last)
		}
		return struct{}{}, last
	}, backoff.WithBackOff(retryBackOff()), backoff.WithMaxTries(MaxRetries+1), backoff.WithMaxElapsedTime(0))
	switch {
	case err == nil:
		return nil
	case tries > MaxRetries && r.IsRetryable(last):
		return fmt.Errorf("%w (still failing after %d tries)", last, tries)
	}
	return last
}
