package dialects

import (
	"context"
	"fmt"
	"time"
)

// SettleGrace is how long an acquire whose caller's context ends while
// its taking statement is on its way still waits for that statement's
// answer (see Settled). A healthy server answers in milliseconds; a
// server that takes longer leaves the outcome unknown.
const SettleGrace = 5 * time.Second

// Settled sends an acquire's taking statement so that the caller's
// context cannot cut it off once sent: a statement cancelled in flight
// may still commit on the server, and the caller would be told it failed
// while the lock stays taken until at-most passes — every node skipping
// the job meanwhile. send runs under a context with ctx's values that
// ends SettleGrace after ctx ends (never earlier), so it returns the
// statement's real outcome; a ctx that has ended before anything was sent
// returns its error at once. A caller that took the lock and finds ctx
// ended releases it again (Abandon).
func Settled[T any](ctx context.Context, send func(ctx context.Context) (T, error)) (T, error) {
	return settled(ctx, SettleGrace, send)
}

func settled[T any](ctx context.Context, grace time.Duration, send func(ctx context.Context) (T, error)) (T, error) {
	if err := ctx.Err(); err != nil {
		var zero T
		return zero, err
	}
	if ctx.Done() == nil {
		return send(ctx) // it cannot end
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stop := context.AfterFunc(ctx, func() {
		select {
		case <-sctx.Done():
		case <-time.After(grace):
			cancel()
		}
	})
	defer stop()
	v, err := send(sctx)
	if err != nil && sctx.Err() != nil {
		// The grace ran out before the answer came.
		err = fmt.Errorf("%w: no answer within %s after the context ended, so the lock may have been taken all the same; it then stays taken until at-most passes (%v)", ctx.Err(), grace, err)
	}
	return v, err
}

// Detached is a context with ctx's values that ctx's end does not end,
// bounded by SettleGrace: for the statements that finish an acquire
// Settled sent (reading its token, releasing a lock taken as ctx ended).
func Detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), SettleGrace)
}

// Abandon releases, under Detached(ctx), a lock an acquire took as its
// context ended, and returns the acquire's error: cause (ctx's error),
// saying whether the release worked. The caller drops at-least first:
// the job never ran.
func Abandon(ctx context.Context, cause error, release func(context.Context) error) error {
	rctx, cancel := Detached(ctx)
	defer cancel()
	return abandonedErr(cause, release(rctx))
}

func abandonedErr(cause, release error) error {
	if release != nil {
		return fmt.Errorf("%w: the lock was taken as the context ended, and releasing it again failed: %v (it stays taken until at-most passes)", cause, release)
	}
	return fmt.Errorf("%w: the lock was taken as the context ended, and released again", cause)
}
