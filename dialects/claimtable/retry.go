package claimtable

import (
	"context"
	"time"
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
// calls retryable.
func (cl *Claimer) retrying(ctx context.Context, send func() error) error {
	err := send()
	r, ok := cl.b.(Retrier)
	if !ok {
		return err
	}
	pause := retryPause
	for i := 0; i < maxRetries && err != nil && r.IsRetryable(err); i++ {
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
		pause *= 2
		err = send()
	}
	return err
}
