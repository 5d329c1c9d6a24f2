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
	// KillOnLoss says that once Lost is closed nothing covers the child
	// any more (a session lock, freed by the server with its connection):
	// the group then gets SIGKILL at once, without Grace, also when Lost
	// closes while leftovers of a child that exited are being stopped.
	KillOnLoss bool
	// Signals are forwarded to the child's process group.
	Signals <-chan os.Signal
	// Tick is how often Until is compared with the clock (default 50ms).
	Tick time.Duration
	// Deadline is closed when the child has run for as long as it may
	// (run --max-runtime): it is stopped as on a loss of a lease that
	// still runs — SIGTERM, SIGKILL after Grace (sooner when the lease
	// ends first) — and the Outcome says Deadline. Nil: no deadline.
	Deadline <-chan struct{}
}

// Outcome is how a supervised child ended.
type Outcome struct {
	ExitCode int
	// Stopped is true when Supervise stopped the child because the lease
	// was lost or about to end.
	Stopped bool
	// Forwarded is the last signal passed on to the child, if any.
	Forwarded os.Signal
	// Leftovers is true when the child exited but left processes running
	// in its group (background jobs); Supervise stopped them.
	Leftovers bool
	// Deadline is true when Supervise stopped the child at Watch.Deadline
	// (Stopped is then true too).
	Deadline bool
}

// Supervise waits for the child to exit, forwarding signals. When the lease
// is lost, or when its end comes within Grace without a refresh having
// moved it, the child's group gets SIGTERM and, Grace later (or at the
// lease end, whichever is sooner), SIGKILL — so the child never runs past
// the end of its lease. When the child exits on its own but leaves
// processes running in its group, those are stopped the same way before
// Supervise returns: nothing of the job outlives the lock. With
// KillOnLoss a loss kills the group at once instead.
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
			if c.GroupRunning() {
				out.Leftovers = true
				var kill <-chan struct{}
				if w.KillOnLoss {
					kill = w.Lost
				}
				c.StopOrKill(stopGrace(w, time.Now(), tick), kill)
			}
			return out
		case sig := <-w.Signals:
			out.Forwarded = sig
			_ = c.Signal(sig)
		case <-w.Deadline:
			c.Stop(stopGrace(w, time.Now(), tick))
			out.Stopped, out.Deadline, out.ExitCode = true, true, c.ExitCode()
			return out
		case <-w.Lost:
			grace := w.Grace
			if w.KillOnLoss {
				grace = 0
			}
			c.Stop(grace)
			out.Stopped, out.ExitCode = true, c.ExitCode()
			return out
		case <-t.C:
			if w.Until == nil {
				continue
			}
			// The clock, not the tick's time: a tick received late (a
			// busy machine) is stale, and would leave the child a longer
			// grace than the lease has left.
			now := time.Now()
			until := w.Until()
			if until.IsZero() || now.Add(w.Grace+2*tick).Before(until) {
				continue
			}
			c.Stop(stopGrace(w, now, tick))
			out.Stopped, out.ExitCode = true, c.ExitCode()
			return out
		}
	}
}

// stopGrace is the time between SIGTERM and SIGKILL for a stop at now:
// Grace, shortened so that SIGKILL comes two ticks before the lease end.
func stopGrace(w Watch, now time.Time, tick time.Duration) time.Duration {
	grace := w.Grace
	if w.Until == nil {
		return grace
	}
	if until := w.Until(); !until.IsZero() {
		grace = min(grace, until.Sub(now)-2*tick)
	}
	return max(grace, 0)
}
