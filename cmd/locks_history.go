package cmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/iostreams"
	"github.com/schedlock/schedlock/internal/output"
)

// DefaultHistoryLimit is how many runs `locks history` lists by default.
const DefaultHistoryLimit = 20

// HistoryOptions are the inputs of `schedlock locks history NAME`.
type HistoryOptions struct {
	IO      *iostreams.IOStreams
	Factory *Factory
	Global  *GlobalOptions
	Command string // command path, for usage errors

	Name  string
	Table string
	Limit int
}

func newCmdLocksHistory(f *Factory, g *GlobalOptions, runF func(context.Context, *HistoryOptions) error) *cobra.Command {
	opts := &HistoryOptions{IO: f.IO, Factory: f, Global: g}
	c := &cobra.Command{
		Use:   "history NAME",
		Short: "List the last runs of a job: start, end, duration against at-most, exit code, host",
		Long: `history lists the last runs of the job whose lock is NAME, newest first, from
schedlock's run table (schedlock_runs, or TABLE_runs beside a native --table
TABLE). 'schedlock run' records every run it started there, with the
database's clock for start and end: runs under the native table, under a
ShedLock or sys_sched_lock table, and session-strategy runs. The table is
created with 'schedlock run --create-table' and keeps the last --history
runs per name (default 100).

USED is the part of its --at-most the run took. A run that used more than
70% of it is too close to losing its lease: by the sizing rule of the
design articles on multi-database job scheduling (not a rule of
ShedLock's), the lock timeout must be at least the queue wait plus the
run time plus 30%. history warns
on stderr about each such run.

Exit codes: 0 listed (also when no run is recorded), 1 error, 2 usage
error (also when the run table does not exist).`,
		Example: `  schedlock locks history nightly-report
  schedlock locks history nightly-report --limit 5 -o json
  schedlock locks history invoices --table jobs.locks`,
		Args:              pauseArgs,
		ValidArgsFunction: lockNameCompletion(f, g, true, dialects.PresetSchedlock),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Command = c.CommandPath()
			opts.Name = args[0]
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return historyRun(c.Context(), opts)
		},
	}
	fl := c.Flags()
	fl.StringVar(&opts.Table, "table", "", "native lock table, optionally schema.table (default schedlock); its runs are in TABLE_runs")
	_ = c.RegisterFlagCompletionFunc("table", lockTableCompletion(f, g, dialects.PresetSchedlock))
	fl.IntVar(&opts.Limit, "limit", DefaultHistoryLimit, "list at most this many runs")
	return c
}

func historyRun(ctx context.Context, o *HistoryOptions) error {
	if err := dialects.CheckName(o.Name); err != nil {
		return &UsageError{Err: err, Command: o.Command}
	}
	if o.Limit <= 0 {
		return usageErrorf(o.Command, "--limit must be positive, got %d", o.Limit)
	}
	target, err := resolveAdminDSN(o.Factory, o.Global, o.Command)
	if err != nil {
		return err
	}
	ns, err := o.Global.namespace(o.Command, target)
	if err != nil {
		return err
	}
	t := dialects.Table{Preset: dialects.PresetSchedlock, Name: o.Table}
	if _, err := t.Schema(); err != nil {
		return &UsageError{Err: err, Command: o.Command}
	}
	backend, err := connectAdmin(ctx, target, o.Command)
	if err != nil {
		return err
	}
	defer backend.Close()
	h, err := runHistoryOf(backend, t)
	if err != nil {
		return &UsageError{Err: target.Scrub(err), Command: o.Command}
	}
	runs, err := h.Runs(ctx, dialects.NamespacedName(ns, o.Name), o.Limit)
	if err != nil {
		return adminError(err, target, o.Command)
	}
	var buf bytes.Buffer
	if err := writeRuns(&buf, o.Name, runs, o.Global.Format, o.IO.IsStdoutTTY(), o.IO.TerminalWidth()); err != nil {
		return err
	}
	if _, err := io.WriteString(o.IO.Out, o.Factory.Scrubber.String(buf.String())); err != nil {
		return err
	}
	if !o.Global.Quiet {
		for _, r := range runs {
			if w := overrunWarning(o.Name, r); w != "" {
				fmt.Fprintln(o.IO.ErrOut, "schedlock: warning: "+cliText(w))
			}
		}
		if w := o.missed(ctx, h, ns, runs); w != "" {
			fmt.Fprintln(o.IO.ErrOut, o.Factory.Scrubber.String("schedlock: warning: "+cliText(w)))
		}
	}
	return nil
}

// missed is the warning that the job missed the schedule its newest run
// was given, judged on this host's clock (the runs' times are the
// database's); "" when it did not, or has no schedule. A successful run
// that cannot be read is one note instead.
func (o *HistoryOptions) missed(ctx context.Context, h dialects.RunHistory, ns string, runs []dialects.Run) string {
	if len(runs) == 0 || runs[0].Schedule == "" {
		return ""
	}
	successes, err := h.LastSuccesses(ctx)
	if err != nil {
		return fmt.Sprintf("the last successful run could not be read: %v", err)
	}
	e := dialects.LockEntry{Name: o.Name, DBNow: time.Now().UTC()}
	var success *dialects.Run
	if s, ok := successes[h.StoredName(dialects.NamespacedName(ns, o.Name))]; ok {
		success = &s
	}
	e.SetRuns(&runs[0], success)
	return missedWarning(o.Name, e)
}

// runHistoryOf returns the run table beside lock table t of backend.
func runHistoryOf(backend dialects.Backend, t dialects.Table) (dialects.RunHistory, error) {
	lb, ok := backend.(dialects.LockBreaker)
	if !ok {
		return nil, missingFeature(backend, "has no run history")
	}
	tl, err := lb.LeaseLocker(t)
	if err != nil {
		return nil, err
	}
	rh, ok := tl.(dialects.RunHistorian)
	if !ok {
		return nil, missingFeature(backend, "has no run history")
	}
	return rh.RunHistory()
}

// overrunWarning says that run used more than dialects.RunShareWarning of
// its at-most, and what at-most the sizing rule asks for; "" when it did
// not.
func overrunWarning(name string, r dialects.Run) string {
	if r.Share() <= dialects.RunShareWarning {
		return ""
	}
	return shortf("lock %q: the run with token %d took %s, %.0f%% of its at-most %s: give --at-most at least the queue wait plus the run time plus 30%% (here %s plus the wait)",
		name, r.Token, overrunDuration(r.Duration, false), 100*r.Share(), overrunDuration(r.AtMost, false), overrunDuration(r.Duration*13/10, true))
}

// overrunDuration is d for overrunWarning: to the millisecond below 1s, to
// 100ms below 10s, to the second above, so that a 1.6s run under an
// at-most of 2s does not read as 2s of 2s. up rounds up, for the at-most
// the warning advises, which must not come out below the rule's figure.
func overrunDuration(d time.Duration, up bool) string {
	unit := time.Second
	switch {
	case d < time.Second:
		unit = time.Millisecond
	case d < 10*time.Second:
		unit = 100 * time.Millisecond
	}
	if up {
		d = (d + unit - 1) / unit * unit
	} else {
		d = d.Round(unit)
	}
	if d < 10*time.Second {
		return d.String()
	}
	return humanDuration(d)
}

// runView is one run in `locks history -o json` and the last_run of
// `locks ls -o json`. The field names are a stable interface; times are
// RFC 3339 in UTC with milliseconds.
type runView struct {
	Name      string  `json:"name"`
	Token     int64   `json:"token"`
	Host      string  `json:"host"`
	Owner     string  `json:"owner"`
	StartedAt *string `json:"started_at"`
	EndedAt   *string `json:"ended_at"`
	// DurationMs is the run's length; AtMostMs its lease length; Used
	// their ratio (0.5: half the at-most).
	DurationMs int64   `json:"duration_ms"`
	AtMostMs   int64   `json:"at_most_ms"`
	Used       float64 `json:"used"`
	ExitCode   int     `json:"exit_code"`
	// Schedule is the job's schedule the run was given (run --schedule);
	// null when none.
	Schedule *string `json:"schedule"`
}

func runJSON(name string, r dialects.Run) runView {
	return runView{
		Name: name, Token: r.Token, Host: r.Host, Owner: r.Owner,
		StartedAt: optTime(r.StartedAt), EndedAt: optTime(r.EndedAt),
		DurationMs: r.Duration.Milliseconds(), AtMostMs: r.AtMost.Milliseconds(),
		Used: float64(int(r.Share()*1000+0.5)) / 1000, ExitCode: r.ExitCode,
		Schedule: optString(r.Schedule),
	}
}

// writeRuns renders the runs of name: JSON or YAML (an array, [] when
// empty), a boxed table on a terminal, tab-separated lines when piped.
func writeRuns(w io.Writer, name string, runs []dialects.Run, f output.Format, tty bool, width int) error {
	views := make([]runView, 0, len(runs))
	for _, r := range runs {
		views = append(views, runJSON(name, r))
	}
	switch f {
	case output.JSON:
		return output.WriteJSON(w, views)
	case output.YAML:
		return output.WriteYAML(w, views)
	}
	if !tty {
		t := output.TableData{Header: []string{"name", "token", "host", "owner", "started_at", "ended_at", "duration_ms", "at_most_ms", "used", "exit_code", "schedule"}}
		for _, v := range views {
			t.Rows = append(t.Rows, []string{v.Name, strconv.FormatInt(v.Token, 10), v.Host, v.Owner, str(v.StartedAt), str(v.EndedAt),
				strconv.FormatInt(v.DurationMs, 10), strconv.FormatInt(v.AtMostMs, 10), strconv.FormatFloat(v.Used, 'f', 3, 64), strconv.Itoa(v.ExitCode), str(v.Schedule)})
		}
		return output.WriteTable(w, t, false)
	}
	if len(runs) == 0 {
		_, err := fmt.Fprintf(w, "No runs recorded for %q.\n", name)
		return err
	}
	t := output.TableData{Header: []string{"STARTED (UTC)", "ENDED (UTC)", "DURATION", "AT MOST", "USED", "EXIT", "HOST", "TOKEN"}, Width: width, Drop: []string{"TOKEN", "ENDED (UTC)"}}
	for _, r := range runs {
		t.Rows = append(t.Rows, []string{shortTime(r.StartedAt), shortTime(r.EndedAt), dash(humanDuration(r.Duration)), dash(humanDuration(r.AtMost)),
			usedCell(r), strconv.Itoa(r.ExitCode), dash(r.Host), strconv.FormatInt(r.Token, 10)})
	}
	return output.WriteTable(w, t, true)
}

// usedCell is the share of at-most a run used, "85% !" past the warning.
func usedCell(r dialects.Run) string {
	if r.AtMost <= 0 {
		return "-"
	}
	s := fmt.Sprintf("%.0f%%", 100*r.Share())
	if r.Share() > dialects.RunShareWarning {
		s += " !"
	}
	return s
}
