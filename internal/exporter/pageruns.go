package exporter

import (
	"context"
	"fmt"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// RunReader is implemented by a Source whose database keeps run history:
// RecentRuns returns the newest runs of the lock of e (as the exporter
// lists it, its namespace split off), newest first, at most n.
type RunReader interface {
	RecentRuns(ctx context.Context, e dialects.LockEntry, n int) ([]dialects.Run, error)
}

// PageRuns is how many runs the status page shows per lock.
const PageRuns = 5

// MaxPageRunLocks bounds the locks per database whose runs the status
// page reads (one indexed query each); the locks past it show their last
// run only. /metrics never reads them.
const MaxPageRunLocks = 100

// runKey names a lock of a target in pageRuns.
type runKey struct {
	target                  int
	name, namespace, source string
}

// recentRuns returns the newest runs of the locks of snap with a
// recorded run, read at most once per snapshot (so at most once per
// Options.Cache however many pages are loaded). A lock whose runs cannot
// be read is left out: the page shows its last run.
func (e *Exporter) recentRuns(ctx context.Context, snap *Snapshot) map[runKey][]dialects.Run {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.pageRuns != nil && e.pageRunsOf == snap {
		return e.pageRuns
	}
	out := map[runKey][]dialects.Run{}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.opts.ReadTimeout)
	defer cancel()
	for i, ts := range snap.Targets {
		rr, ok := e.targets[i].src.(RunReader)
		if !ok || !ts.Up {
			continue
		}
		read := 0
		for _, l := range groupLocks(ts.Locks) {
			if l.LastRun == nil || read >= MaxPageRunLocks {
				continue
			}
			read++
			runs, err := rr.RecentRuns(ctx, l.LockEntry, PageRuns)
			if err != nil {
				e.opts.Logger.Debug("reading recent runs failed", "dsn", ts.Name, "lock", l.Name, "err", oneLine(err.Error()))
				continue
			}
			out[runKey{i, l.Name, l.Namespace, l.Source}] = runs
		}
	}
	e.pageRuns, e.pageRunsOf = out, snap
	return out
}

// runText is one run on the status page: "05-01 02:00:00 · 12s · 1% of
// 30m0s · exit 0".
func runText(r dialects.Run) string {
	s := r.StartedAt.UTC().Format("01-02 15:04:05") + " · " + r.Duration.Round(time.Millisecond).String()
	if r.AtMost > 0 {
		s += fmt.Sprintf(" · %.0f%% of %s", 100*r.Share(), r.AtMost)
	}
	return s + fmt.Sprintf(" · exit %d", r.ExitCode)
}
