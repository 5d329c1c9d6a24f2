package cmd

import (
	"fmt"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// deadline is the channel closed once COMMAND has run --max-runtime, and
// the func that stops its timer; nil without --max-runtime.
func (o *RunOptions) deadline() (<-chan struct{}, func()) {
	if o.MaxRuntime <= 0 {
		return nil, func() {}
	}
	ch := make(chan struct{})
	t := time.AfterFunc(o.MaxRuntime, func() { close(ch) })
	return ch, func() { t.Stop() }
}

// maxRuntimeReason is why a run stopped at --max-runtime failed, for the
// error, the hooks (SCHEDLOCK_REASON) and the log.
func (o *RunOptions) maxRuntimeReason() string {
	return fmt.Sprintf("%s ran past --max-runtime %s and was stopped", o.Argv[0], o.MaxRuntime)
}

// maxRuntimeError is the exit-124 error of a command stopped at
// --max-runtime; release is WithLock's error (nil: the lock was
// released). The lock was held all along: a lost lease is said too.
func (o *RunOptions) maxRuntimeError(st *runState, release error) error {
	msg := fmt.Sprintf("%s (exit %d); lock %q released", o.maxRuntimeReason(), st.outcome.ExitCode, o.Name)
	if release != nil {
		msg = fmt.Sprintf("%s (exit %d); releasing lock %q failed (it frees itself when its lease ends): %v", o.maxRuntimeReason(), st.outcome.ExitCode, o.Name, release)
	}
	return &ExitError{Code: CodeMaxRuntime, Err: fmt.Errorf("%s", msg)}
}

// warnMaxRuntime warns when --max-runtime exceeds an --at-most given on a
// strategy whose lock run does not refresh (session: no lease, at-most
// bounds nothing there), so the run's only bound is --max-runtime. On the
// lease strategies run refreshes the lease every third of --at-most, and a
// longer --max-runtime is what it is for.
func (o *RunOptions) warnMaxRuntime(strategy dialects.Strategy) {
	if o.MaxRuntime <= o.AtMost || !o.atMostGiven || strategy == dialects.StrategyTable {
		return
	}
	o.note(!o.Global.Quiet, "warning: --max-runtime %s exceeds --at-most %s, but the %s strategy has no lease to refresh and --at-most bounds nothing: COMMAND may run for up to %s", o.MaxRuntime, o.AtMost, strategy, o.MaxRuntime)
}
