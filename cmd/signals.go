package cmd

import (
	"os"
	"os/signal"
	"syscall"
)

// Signals schedlock subscribes to. A signal that was ignored when
// schedlock started (nohup ignores SIGHUP; a shell ignores SIGINT and
// SIGQUIT in a background job) stays ignored: it is neither subscribed to
// nor forwarded, and COMMAND inherits it ignored, as it would without
// schedlock in between. Both lists are computed once, before anything
// subscribes, because signal.Ignored stops reporting a signal as ignored
// once it has been subscribed to.
var (
	// interruptSignals cancel the command's context (see Run).
	interruptSignals = notIgnored(os.Interrupt, syscall.SIGTERM)
	// forwardedSignals are passed on to the process group of run's
	// COMMAND while it runs. SIGINT and SIGTERM also cancel schedlock's
	// context: before COMMAND starts they abort the wait for the lock.
	forwardedSignals = notIgnored(os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
)

// notIgnored returns those of sigs that are not ignored now.
func notIgnored(sigs ...os.Signal) []os.Signal {
	var live []os.Signal
	for _, s := range sigs {
		if !signal.Ignored(s) {
			live = append(live, s)
		}
	}
	return live
}
