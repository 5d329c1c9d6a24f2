package cmd

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultRunTimeout bounds connecting and acquiring in `schedlock run`
// when --timeout is not given: a database that accepts the connection and
// then answers nothing (a frozen server, a network path that drops
// packets) fails the run after this long instead of holding a cron slot
// forever. --wait is added to it, so that a wait for a held lock keeps its
// full length. `--timeout 0` removes the bound.
const DefaultRunTimeout = 30 * time.Second

// acquireTimeout is how long `schedlock run` may take to connect and
// acquire: --timeout when given (0: no limit), else DefaultRunTimeout plus
// --wait.
func (o *RunOptions) acquireTimeout() time.Duration {
	if o.TimeoutGiven {
		return o.Global.Timeout
	}
	return DefaultRunTimeout + o.Wait + o.Jitter
}

// withAcquireDeadline bounds ctx by the default acquire timeout when
// --timeout was not given (an explicit --timeout is applied to every
// command's context by Execute). The bound ends where the command starts:
// runLocked detaches the lock from ctx then.
func (o *RunOptions) withAcquireDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	if o.TimeoutGiven || o.acquireTimeout() <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, o.acquireTimeout())
}

// timedOut reports whether ctx ended because the acquire timeout ran out.
func timedOut(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded)
}

// timeoutError says that run gave up on the lock after the acquire
// timeout, with what it was doing (err) when there is more to say.
func (o *RunOptions) timeoutError(err error) error {
	msg := fmt.Sprintf("gave up on lock %q after --timeout %s", o.Name, o.acquireTimeout())
	if !o.TimeoutGiven {
		msg = fmt.Sprintf("gave up on lock %q after %s (the default --timeout", o.Name, o.acquireTimeout())
		switch {
		case o.Wait > 0 && o.Jitter > 0:
			msg += fmt.Sprintf(", %s plus --wait and --jitter", DefaultRunTimeout)
		case o.Wait > 0:
			msg += fmt.Sprintf(", %s plus --wait", DefaultRunTimeout)
		case o.Jitter > 0:
			msg += fmt.Sprintf(", %s plus --jitter", DefaultRunTimeout)
		}
		msg += ")"
	}
	if o.blockers != nil {
		if who := o.blockers(context.Background()); who != "" {
			msg += ": " + who
		}
	}
	if err == nil || err.Error() == context.DeadlineExceeded.Error() {
		return errors.New(msg)
	}
	return fmt.Errorf("%s: %w", msg, err)
}
