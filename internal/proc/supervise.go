package proc

import (
	"os"
	"time"
)

// Watch is what Supervise watches besides the child.
type Watch struct {
	// Lost is closed when the lock is known to be lost.
	Lost <-chan struct{}
	// Until returns the instant the lease ends unless refreshed; the zero
	// time means no lease end (session locks). Refreshes move it forward.
	Until func() time.Time
	// Grace is the time between SIGTERM and SIGKILL.
	Grace time.Duration
	// Signals are forwarded to the child's process group.
	Signals <-chan os.Signal
	// Tick is how often Until is compared with the clock (default 50ms).
	Tick time.Duration
}

// Outcome is how a supervised child ended.
type Outcome struct {
	ExitCode int
	// Stopped is true when Supervise stopped the child because the lease
	// was lost or about to end.
	Stopped bool
	// Forwarded is the last signal passed on to the child, if any.
	Forwarded os.Signal
}

// Supervise waits for the child to exit, forwarding signals. When the lease
// is lost, or when its end comes within Grace without a refresh having
// moved it, the child's group gets SIGTERM and, Grace later (or at the
// lease end, whichever is sooner), SIGKILL — so the child never runs past
// the end of its lease.
func Supervise(c *Child, w Watch) Outcome {
	tick := w.Tick
	if tick <= 0 {
		tick = 50 * time.Millisecond
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	var out Outcome
	for {
		select {
		case <-c.Done():
			out.ExitCode = c.ExitCode()
			return out
		case sig := <-w.Signals:
			out.Forwarded = sig
			_ = c.Signal(sig)
		case <-w.Lost:
			c.Stop(w.Grace)
			out.Stopped, out.ExitCode = true, c.ExitCode()
			return out
		case now := <-t.C:
			if w.Until == nil {
				continue
			}
			until := w.Until()
			if until.IsZero() || now.Add(w.Grace+2*tick).Before(until) {
				continue
			}
			grace := until.Sub(now) - 2*tick
			if grace > w.Grace {
				grace = w.Grace
			}
			if grace < 0 {
				grace = 0
			}
			c.Stop(grace)
			out.Stopped, out.ExitCode = true, c.ExitCode()
			return out
		}
	}
}
