package claimtable

import (
	"context"
	"time"

	"github.com/cenkalti/backoff/v5"
)

// Retrier is optionally implemented by a Builder whose database aborts a
// statement with an error that means "nothing was done, send it again":
// CockroachDB's and YugabyteDB's SQLSTATE 40001 under SERIALIZABLE. The
// engine then sends the statement (or the claim transaction, which was
// rolled back) again, at most maxRetries times, pausing 5ms, then twice
// that, and so on.
type Retrier interface {
	IsRetryable(err error) bool
}

const (
	maxRetries = 4
	retryPause = 5 * time.Millisecond
)

// retrying runs send, and again while it fails with an error the builder
// calls retryable. It returns the statement's last error, also when the
// context ends during a pause.
func (cl *Claimer) retrying(ctx context.Context, send func() error) error {
	r, ok := cl.b.(Retrier)
	if !ok {
		return send()
	}
	var last error
	_, err := backoff.Retry(ctx, func() (struct{}, error) {
		last = send()
		if last != nil && !r.IsRetryable(last) {
			return struct{}{}, backoff.Permanent(last)
		}
		return struct{}{}, last
	}, backoff.WithBackOff(&backoff.ExponentialBackOff{
		InitialInterval: retryPause, Multiplier: 2, MaxInterval: time.Minute,
	}), backoff.WithMaxTries(maxRetries+1), backoff.WithMaxElapsedTime(0))
	if err == nil {
		return nil
	}
	return last
}
