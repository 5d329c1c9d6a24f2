package cmd

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"time"
)

// metricsTimeout bounds checking the --metrics-textfile before the run
// and updating it after, the wait for its lock file included: with the
// release (dialects.ReleaseTimeout), the run history (historyTimeout),
// closeTimeout and the end hooks (--hook-timeout), one of the bounds of
// what `schedlock run` does once COMMAND has ended. A variable so that
// tests can shorten it.
var metricsTimeout = 10 * time.Second

// closeTimeout bounds closing the connection to the database.
const closeTimeout = 5 * time.Second

// afterCtx is the context of what run does once COMMAND has ended, or
// once it is known that COMMAND will not start: recording the run in the
// run table, the metrics file, closing the connection, the end hooks.
// Each of them has a bound of its own; this context ends them all at
// once when SIGINT or SIGTERM arrives from the first call on (unless it
// was ignored when schedlock started, see interruptSignals). A signal
// that came before went to COMMAND, or ended the wait for the lock: the
// run is still reported. The first call starts the context; afterRun
// stops it.
func (o *RunOptions) afterCtx() context.Context {
	r := &o.record
	if r.after != nil {
		return r.after
	}
	base := r.ctx
	if base == nil {
		base = context.Background()
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(base))
	sigs := make(chan os.Signal, 1)
	if len(interruptSignals) > 0 { // none would mean every signal
		signal.Notify(sigs, interruptSignals...)
	}
	quit := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-quit:
		}
	}()
	// Run's context ends on the first SIGINT or SIGTERM: if that comes
	// only now, it ends this context too. Its --timeout deadline does not.
	stopWatch := func() bool { return false }
	if base.Err() == nil {
		stopWatch = context.AfterFunc(base, func() {
			if !errors.Is(context.Cause(base), context.DeadlineExceeded) {
				cancel()
			}
		})
	}
	r.after = ctx
	r.stopAfter = func() {
		stopWatch()
		signal.Stop(sigs)
		close(quit)
		cancel()
	}
	return ctx
}

// interruptedAfter reports whether a signal ended the steps after
// COMMAND.
func (o *RunOptions) interruptedAfter() bool {
	return o.record.after != nil && o.record.after.Err() != nil
}

// stopAfterCtx ends the context of afterCtx, if it was started.
func (o *RunOptions) stopAfterCtx() {
	if o.record.stopAfter != nil {
		o.record.stopAfter()
		o.record.stopAfter = nil
	}
}

// closeBackend closes db, waiting at most closeTimeout, or until a
// signal (afterCtx): a close still waiting on the database then is left
// to finish on its own as the process exits.
func (o *RunOptions) closeBackend(db io.Closer) {
	done := make(chan struct{})
	go func() {
		_ = db.Close()
		close(done)
	}()
	t := time.NewTimer(closeTimeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		o.note(o.Global.Verbose, "closing the connection took over %s; not waiting for it", closeTimeout)
	case <-o.afterCtx().Done():
	}
}
