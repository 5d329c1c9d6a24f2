package cmd

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/output"
)

// lastRunLister is a LockLister whose listings carry, for the rows of
// lock tables and for session locks, the newest run recorded in their run
// tables (a native table's own; schedlock's beside a ShedLock or
// sys_sched_lock table, and the native table's for session locks), and a
// note for each run that used more than dialects.RunShareWarning of its
// at-most. A run table that does not exist adds nothing; one that cannot
// be read adds a note, never an error.
type lastRunLister struct {
	dialects.LockLister
	backend dialects.Backend
}

func withLastRuns(l dialects.LockLister, b dialects.Backend) dialects.LockLister {
	return &lastRunLister{LockLister: l, backend: b}
}

func (l *lastRunLister) ListLocks(ctx context.Context, opts dialects.ListOptions) (*dialects.Listing, error) {
	listing, err := l.LockLister.ListLocks(ctx, opts)
	if err != nil {
		return listing, err
	}
	last := map[dialects.Table]tableRuns{} // by lock table
	for i := range listing.Locks {
		e := &listing.Locks[i]
		t, ok := runsTableOf(*e)
		if !ok {
			continue
		}
		runs, read := last[t]
		if !read {
			runs = l.lastRuns(ctx, t, listing)
			last[t] = runs
		}
		if r, ok := runs.last[e.Name]; ok {
			var success *dialects.Run
			if s, ok := runs.success[e.Name]; ok {
				success = &s
			}
			e.SetRuns(&r, success)
			if w := overrunWarning(e.Name, r); w != "" {
				listing.Notes = append(listing.Notes, warningNote+w)
			}
			if w := missedWarning(e.Name, *e); w != "" {
				listing.Notes = append(listing.Notes, warningNote+w)
			}
		}
	}
	return listing, nil
}

// runsTableOf is the lock table whose run table records e's runs: its own
// table (any lease preset), the native table for a session lock; false for
// Liquibase's lock and a session lock whose name is unknown.
func runsTableOf(e dialects.LockEntry) (dialects.Table, bool) {
	switch {
	case e.Name == "":
		return dialects.Table{}, false
	case e.Strategy == dialects.StrategySession:
		return dialects.Table{Preset: dialects.PresetSchedlock}, true
	case e.Strategy == dialects.StrategyTable && e.Preset != "" && e.Preset != dialects.PresetLiquibase:
		return dialects.Table{Preset: e.Preset, Name: e.Source}, true
	}
	return dialects.Table{}, false
}

// tableRuns are the newest run and the newest successful run of every
// name of one run table, by stored name.
type tableRuns struct {
	last, success map[string]dialects.Run
}

// lastRuns reads the newest run and the newest successful run of every
// name in the run table of lock table t; none when there is no run table.
func (l *lastRunLister) lastRuns(ctx context.Context, t dialects.Table, listing *dialects.Listing) tableRuns {
	h, err := runHistoryOf(l.backend, t)
	if err != nil {
		return tableRuns{}
	}
	runs, err := h.LastRuns(ctx)
	switch {
	case errors.Is(err, dialects.ErrNoTable):
		return tableRuns{}
	case err != nil:
		listing.Notes = append(listing.Notes, fmt.Sprintf("the last runs in %s could not be read: %v", h.Table(), err))
		return tableRuns{}
	}
	success, err := h.LastSuccesses(ctx)
	if err != nil {
		listing.Notes = append(listing.Notes, fmt.Sprintf("the last successful runs in %s could not be read: %v", h.Table(), err))
	}
	return tableRuns{last: runs, success: success}
}

// missedWarning says, in one line, that the lock's job has not succeeded
// as its schedule asks (e.Missed); "" otherwise.
func missedWarning(name string, e dialects.LockEntry) string {
	if !e.Missed {
		return ""
	}
	since := "no successful run is recorded"
	if e.LastSuccess != nil {
		since = "its last successful run started " + shortTime(e.LastSuccess.StartedAt)
	}
	return shortf("lock %q missed its schedule %q: %s, and one was due by %s; runs since were missed, skipped or failed",
		name, e.Schedule, since, shortTime(e.SuccessDue))
}

// lastRunCell is a lock's last run for people: "09:58:30, 12s of 30m (1%)".
func lastRunCell(e dialects.LockEntry) string {
	r := e.LastRun
	if r == nil {
		return "-"
	}
	s := clockTime(r.StartedAt, e.DBNow) + ", " + dash(humanDuration(r.Duration))
	if r.AtMost > 0 {
		s += " of " + humanDuration(r.AtMost) + " (" + usedCell(*r) + ")"
	}
	if r.ExitCode != 0 {
		s += ", exit " + strconv.Itoa(r.ExitCode)
	}
	if e.Missed {
		s += ", schedule missed"
	}
	return s
}

// addLastRunColumn adds LAST RUN to the terminal table when some lock has
// a recorded run; t's rows are locks' in order.
func addLastRunColumn(t *output.TableData, locks []dialects.LockEntry) {
	any := false
	for _, e := range locks {
		any = any || e.LastRun != nil
	}
	if !any {
		return
	}
	t.Header = append(t.Header, "LAST RUN")
	for i := range t.Rows {
		t.Rows[i] = append(t.Rows[i], lastRunCell(locks[i]))
	}
}

// lastRunTSV adds the last run's columns to the piped table, after every
// other column so that those keep their places.
func lastRunTSV(t *output.TableData, locks []dialects.LockEntry) {
	t.Header = append(t.Header, "last_run_started_at", "last_run_duration_ms", "last_run_at_most_ms", "last_run_exit_code")
	for i := range t.Rows {
		cells := []string{"", "", "", ""}
		if r := locks[i].LastRun; r != nil {
			cells = []string{output.Time(r.StartedAt), strconv.FormatInt(r.Duration.Milliseconds(), 10), strconv.FormatInt(r.AtMost.Milliseconds(), 10), strconv.Itoa(r.ExitCode)}
		}
		t.Rows[i] = append(t.Rows[i], cells...)
	}
}

// lastRunJSON is the last_run field of a lock in `locks ls -o json`.
func lastRunJSON(e dialects.LockEntry) *runView {
	if e.LastRun == nil {
		return nil
	}
	v := runJSON(e.Name, *e.LastRun)
	return &v
}

// warningNote starts a listing note that `locks ls` prints as a warning.
const warningNote = "warning: "
