package locktable

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
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

// retrying runs send, and again while it fails with an error the builder
// calls retryable, at most MaxRetries more times.
func (l *Locker) retrying(ctx context.Context, send func() error) error {
	err := send()
	r, ok := l.b.(Retrier)
	if !ok {
		return err
	}
	pause := RetryPause
	for try := 1; err != nil && r.IsRetryable(err); try++ {
		if try > MaxRetries {
			return fmt.Errorf("%w (still failing after %d tries)", err, try)
		}
		timer := time.NewTimer(pause + rand.N(pause/2+1))
		select {
		case <-ctx.Done():
			timer.Stop()
			return err
		case <-timer.C:
		}
		pause *= 2
		err = send()
	}
	return err
}
