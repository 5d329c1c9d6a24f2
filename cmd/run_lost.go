package cmd

import (
	"errors"
	"fmt"

	"github.com/schedlock/schedlock/dialects"
)

// stoppedError is the exit-113 error of a command stopped because its
// lock was lost or its lease was about to end unrefreshed. It says why in
// the database's own words where there are some: the loss's cause (a
// session terminated by an administrator, a connection refused, a lock
// table that is gone) or, when the lease's end came first, the last
// refresh's error. Execute scrubs it of passwords like every error.
func (o *RunOptions) stoppedError(st *runState) error {
	cmdName := o.Argv[0]
	var why string
	switch {
	case st.stopped != nil && errors.Is(st.stopped, dialects.ErrLeaseLost):
		why = fmt.Sprintf("lock %q was lost (%v)", o.Name, st.stopped)
	case st.refreshErr != nil:
		why = fmt.Sprintf("the lease of lock %q was about to end at %s and could not be refreshed (%v)", o.Name, dialects.FormatTime(st.until), st.refreshErr)
	default:
		why = fmt.Sprintf("the lease of lock %q was about to end at %s and could not be refreshed", o.Name, dialects.FormatTime(st.until))
	}
	return &ExitError{Code: CodeLeaseLost, Err: fmt.Errorf("%s: stopped %s (exit %d)", why, cmdName, st.outcome.ExitCode)}
}
