package cmd

import (
	"os"

	"github.com/schedlock/schedlock/dialects"
)

// waitSwept waits, after a clean release, until the lock table has deleted
// the lease's row, or a signal comes. Only a table whose release deletes
// the row (sys_sched_lock) has anything to wait for: an early release
// keeps its row until locked-at + --at-least and deletes it then, and a
// process that exited first would leave the expired row behind, refusing
// the INSERT of every application that locks the table that way. A
// signal stops the wait and leaves the row, which the next acquire takes
// over.
func (o *RunOptions) waitSwept(lease dialects.Lease, sigs <-chan os.Signal) {
	rs, ok := lease.(dialects.RowSweeper)
	if !ok {
		return
	}
	select {
	case <-rs.Swept():
		return
	default:
	}
	o.note(o.Global.Verbose, "keeping lock %q until --at-least has passed, then deleting its row", o.Name)
	select {
	case <-rs.Swept():
	case <-sigs:
		o.note(!o.Global.Quiet, "lock %q: its row stays until the next acquire takes it over (interrupted before --at-least had passed)", o.Name)
	}
}
