package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/schedlock/schedlock/dialects"
)

// historyTimeout bounds recording a run after the command has exited.
const historyTimeout = 5 * time.Second

// runHistory is where `run` records its run: the run table of the native
// lock table, and the lock's name as stored.
type runHistory struct {
	table  dialects.RunHistory
	stored string
}

// addRunHistoryFlags adds --history to run.
func addRunHistoryFlags(fl *pflag.FlagSet, o *RunOptions) {
	fl.StringVar(&o.Schedule, "schedule", "", "the job's schedule, recorded with its runs so that locks ls and locks history tell when a successful run is overdue: a cron line ('*/5 * * * *'), @hourly, @daily or @every 5m")
	fl.IntVar(&o.History, "history", dialects.DefaultKeepRuns, "record each run in schedlock's run table (schedlock_runs; TABLE_runs beside a native --table TABLE), for every preset and the session strategy, and keep this many per name; 0: record nothing")
}

// historyAsked reports whether --history was on the command line.
func (o *RunOptions) historyAsked() bool { return o.historyGiven }

// validateHistory checks --history.
func (o *RunOptions) validateHistory() error {
	if o.History < 0 {
		return usageErrorf(o.Command, "--history must not be negative, got %d (0 records nothing)", o.History)
	}
	return nil
}

// createRunTable creates the run table of the lock table tl, with
// --create-table, where run would record into it: --history not 0.
func (o *RunOptions) createRunTable(ctx context.Context, tl dialects.LeaseLocker) error {
	if o.History == 0 {
		return nil
	}
	rh, ok := tl.(dialects.RunHistorian)
	if !ok {
		return nil
	}
	h, err := rh.RunHistory()
	if err != nil {
		return nil // the backend has none: nothing to create
	}
	return h.CreateTable(ctx)
}

// prepareHistory finds the run table for locker, or notes why runs will
// not be recorded when --history asked for it. ns is the namespace. A
// table locker has its own (schedlock's for the other presets); a session
// locker records into the run table of db's native lock table, when db has
// one.
func (o *RunOptions) prepareHistory(db dialects.Backend, locker dialects.Locker, ns string) {
	if o.History == 0 {
		return
	}
	var h dialects.RunHistory
	var err error
	if rh, ok := locker.(dialects.RunHistorian); ok {
		h, err = rh.RunHistory()
	} else {
		native := dialects.Table{Preset: dialects.PresetSchedlock}
		// Detection saw no native table: no run table beside it either,
		// and no failing INSERT in the server's log at every run.
		if w, ok := db.(dialects.LeaseTableWitness); ok {
			if exists, known := w.LeaseTableExists(native); known && !exists {
				o.historyNote("the session strategy records runs in %s beside the native lock table, which does not exist; create both with a run --strategy table --create-table", dialects.RunsTable(dialects.KnownTables()[0].Name))
				return
			}
		}
		h, err = runHistoryOf(db, native)
	}
	if err != nil {
		o.historyNote("%v", err)
		return
	}
	o.history = &runHistory{table: h, stored: h.StoredName(dialects.NamespacedName(ns, o.Name))}
}

// historyNote prints one warning about --history when it was asked for.
func (o *RunOptions) historyNote(format string, args ...any) {
	o.note(o.historyAsked() && !o.Global.Quiet, "warning: runs are not recorded: "+format, args...)
}

// recordRun writes the run that st describes, with the exit code that
// result gives, into the run table. It never changes the result: a
// missing run table is silent unless --history was given, any other
// failure is one warning line.
func (o *RunOptions) recordRun(ctx context.Context, st *runState, result error) {
	if o.history == nil || !st.started || st.lease == nil {
		return
	}
	token, _ := st.lease.Token()
	host, _ := os.Hostname()
	run := dialects.Run{
		Name: o.history.stored, Token: token, Host: host, Owner: st.lease.Owner(),
		Duration: st.ranTo.Sub(st.ranFrom), AtMost: o.AtMost, ExitCode: runExitCode(ctx, result),
		Schedule: o.Schedule,
	}
	ctx, cancel := context.WithTimeout(o.afterCtx(), historyTimeout)
	defer cancel()
	err := o.history.table.Record(ctx, run, o.History)
	var nocol *dialects.NoScheduleColumnError
	switch {
	case errors.As(err, &nocol):
		o.note(!o.Global.Quiet, "warning: the run was recorded in %s without its --schedule: the table has no column for it; run once with --create-table to add it (%s)", nocol.Table, nocol.AddSQL)
	case err == nil:
		o.note(o.Global.Verbose, "recorded the run in %s (exit code %d, %s)", o.history.table.Table(), run.ExitCode, humanDuration(run.Duration))
	case errors.Is(err, dialects.ErrNoTable):
		o.historyNote("table %s does not exist; create it with --create-table", o.history.table.Table())
	case o.interruptedAfter():
		o.note(!o.Global.Quiet, "warning: the run was not recorded in %s: interrupted", o.history.table.Table())
	default:
		o.note(!o.Global.Quiet, "warning: the run was not recorded in %s: %v", o.history.table.Table(), o.Factory.Scrubber.String(err.Error()))
	}
}

// validateSchedule checks --schedule; a schedule that does not parse (or
// an empty one given) is a usage error. It keeps the spec as parsed.
func (o *RunOptions) validateSchedule() error {
	if o.Schedule == "" && !o.scheduleGiven {
		return nil
	}
	s, err := dialects.ParseSchedule(o.Schedule)
	if err != nil {
		return &UsageError{Err: fmt.Errorf("--schedule: %w", err), Command: o.Command}
	}
	o.Schedule = s.Spec
	return nil
}

// warnUnrecordedSchedule warns when --schedule was given but the run is
// recorded nowhere, so the schedule is not kept either.
func (o *RunOptions) warnUnrecordedSchedule() {
	if o.Schedule != "" && o.history == nil {
		o.note(!o.Global.Quiet, "warning: --schedule is not recorded: it is kept with the run history, which this run does not write (--history 0, or no run table: --create-table creates it)")
	}
}
