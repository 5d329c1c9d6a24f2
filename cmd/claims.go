package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/claimtable"
	"github.com/schedlock/schedlock/internal/elide"
	"github.com/schedlock/schedlock/internal/iostreams"
	"github.com/schedlock/schedlock/internal/output"
)

// ClaimsOptions are the inputs of `schedlock claims ls` and `claims
// release`.
type ClaimsOptions struct {
	IO      *iostreams.IOStreams
	Factory *Factory
	Global  *GlobalOptions
	Command string

	Table   string
	Columns []string // role=column
	Status  []string // role=value,…
	States  []string // ls
	All     bool     // ls
	Limit   int      // ls
	Owner   string
	Force   bool // release
	Yes     bool // release
	DryRun  bool // release
}

// claimStates are the states ls shows and --state selects.
var claimStates = []string{string(claimtable.StateClaimed), string(claimtable.StateOverdue), string(claimtable.StateFailed), string(claimtable.StateReady), string(claimtable.StateDone)}

// NewCmdClaims builds `schedlock claims` with ls and release. runF
// replaces the run functions in tests.
func NewCmdClaims(f *Factory, g *GlobalOptions, runF func(context.Context, *ClaimsOptions) error) *cobra.Command {
	claims := &cobra.Command{
		Use:   "claims",
		Short: "Inspect the task rows workers claim, and give a dead worker's rows back",
		Example: `  schedlock claims ls --dsn 'postgres://ops@db1/jobs'
  schedlock claims release --owner worker-7 --dry-run`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return &UsageError{Err: errors.New("missing subcommand: use 'schedlock claims ls' or 'schedlock claims release'"), Command: c.CommandPath()}
		},
	}
	claims.AddCommand(newCmdClaimsList(f, g, runF), newCmdClaimsRelease(f, g, runF))
	return claims
}

func newCmdClaimsList(f *Factory, g *GlobalOptions, runF func(context.Context, *ClaimsOptions) error) *cobra.Command {
	o := &ClaimsOptions{IO: f.IO, Factory: f, Global: g}
	c := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List claimed, overdue and failed task rows with their owners",
		Long: `ls lists the rows of a task table that need a person's eye:

  - claimed: a worker holds the row within its claim lease;
  - overdue: the claim lease has passed while the row is still claimed, so
    its worker died or hangs; any worker's next claim takes it again, and
    claims release gives it back at once;
  - failed: its retries are used up; the owner that failed it last is kept.

--all adds ready and done rows. States are judged by the database clock.
A table of your own is read through --column ROLE=COLUMN and its status
values through --status (ready=WAIT,claimed=RUNNING,…); an optional column
(type, payload, priority, max_retries, updated_at) the table lacks is left
out. A mapped column the table lacks is a usage error.

Exit codes: 0 listed (also when nothing is claimed), 1 error, 2 usage error
(a table without the mapped columns names them).`,
		Example: `  schedlock claims ls --dsn 'postgres://ops@db1/jobs'
  schedlock claims ls --state overdue -o json
  schedlock claims ls --table t_order --column id=order_id --column status=state \
    --status ready=WAIT,claimed=RUNNING,done=DONE,failed=FAILED --all`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o.Command = c.CommandPath()
			if runF != nil {
				return runF(c.Context(), o)
			}
			return claimsListRun(c.Context(), o)
		},
	}
	addClaimTableFlags(c, o)
	fl := c.Flags()
	fl.StringSliceVar(&o.States, "state", nil, "show only these states: "+strings.Join(claimStates, ", "))
	fl.BoolVar(&o.All, "all", false, "show ready and done rows too")
	fl.StringVar(&o.Owner, "owner", "", "show only this worker's rows")
	fl.IntVar(&o.Limit, "limit", 1000, "read at most this many rows")
	_ = c.RegisterFlagCompletionFunc("state", valuesCompletion(claimStates))
	return c
}

func newCmdClaimsRelease(f *Factory, g *GlobalOptions, runF func(context.Context, *ClaimsOptions) error) *cobra.Command {
	o := &ClaimsOptions{IO: f.IO, Factory: f, Global: g}
	c := &cobra.Command{
		Use:   "release --owner OWNER",
		Short: "Give a dead worker's claimed rows back",
		Long: `release gives the rows OWNER has claimed back to the ready rows: unowned,
due as before, their retries unchanged, so the next claim takes them.

A worker may still be working on a row within its claim lease, so by default
only its overdue rows (lease passed) are given back; --force gives back its
live claims too (the worker then finds its completion refused, and the rows
may run twice). The change is one statement guarded by the owner and the
claimed state, so a row another worker claimed in the meantime is left alone.

Every change is confirmed: a y/N prompt on a terminal, or --yes. Without a
terminal and without --yes, release refuses (exit 2). --dry-run shows the
rows and changes nothing. --table, --column and --status read a table of
your own, as for claims ls; they are checked against the table's columns
before anything is written.

Exit codes: 0 given back (or --dry-run of a change release would make), 1
error, 2 usage error or no confirmation, 3 nothing to give back (no rows of
OWNER, or only live claims and no --force), 130 declined or interrupted.`,
		Example: `  schedlock claims release --owner worker-7 --dry-run
  schedlock claims release --owner worker-7 --yes
  schedlock claims release --owner worker-7 --force`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o.Command = c.CommandPath()
			if runF != nil {
				return runF(c.Context(), o)
			}
			return claimsReleaseRun(c.Context(), o)
		},
	}
	addClaimTableFlags(c, o)
	fl := c.Flags()
	fl.StringVar(&o.Owner, "owner", "", "the worker whose rows to give back (required)")
	fl.BoolVar(&o.Force, "force", false, "give back rows still within their claim lease too (still asks)")
	fl.BoolVarP(&o.Yes, "yes", "y", false, "do not ask for confirmation")
	fl.BoolVar(&o.DryRun, "dry-run", false, "show what would change and change nothing")
	return c
}

func claimsListRun(ctx context.Context, o *ClaimsOptions) error {
	for _, s := range o.States {
		if !slices.Contains(claimStates, s) {
			return usageErrorf(o.Command, "--state %q: use %s", s, elide.Whole(strings.Join(claimStates, ", ")))
		}
	}
	if o.Limit < 1 {
		return usageErrorf(o.Command, "--limit %d: give at least 1", o.Limit)
	}
	cl, backend, target, err := o.open(ctx)
	if err != nil {
		return err
	}
	defer backend.Close()
	all := o.All || slices.Contains(o.States, string(claimtable.StateReady)) || slices.Contains(o.States, string(claimtable.StateDone))
	l, err := cl.List(ctx, claimtable.ListOptions{Owner: o.Owner, All: all, Limit: o.Limit})
	if err != nil {
		return adminError(err, target, o.Command)
	}
	if !slices.ContainsFunc(l.Rows, func(r claimtable.Row) bool {
		return r.State == claimtable.StateClaimed || r.State == claimtable.StateOverdue
	}) {
		if note := unmappedNote(ctx, cl); note != "" {
			fmt.Fprintln(o.IO.ErrOut, "schedlock: "+o.Factory.Scrubber.String(note))
		}
	}
	if len(o.States) > 0 {
		l.Rows = slices.DeleteFunc(l.Rows, func(r claimtable.Row) bool { return !slices.Contains(o.States, string(r.State)) })
	}
	var buf bytes.Buffer
	if err := writeClaims(&buf, l, o.Global.Format, o.IO.IsStdoutTTY(), o.IO.TerminalWidth()); err != nil {
		return err
	}
	_, err = io.WriteString(o.IO.Out, o.Factory.Scrubber.String(buf.String()))
	return err
}

// claimRowView is one row in `claims ls -o json`; the field names are a
// stable interface.
type claimRowView struct {
	ID           int64  `json:"id" yaml:"id"`
	Type         string `json:"type" yaml:"type"`
	State        string `json:"state" yaml:"state"`
	Owner        string `json:"owner" yaml:"owner"`
	Due          string `json:"due" yaml:"due"`
	ClaimedUntil string `json:"claimed_until" yaml:"claimed_until"`
	Retries      int    `json:"retries" yaml:"retries"`
	MaxRetries   int    `json:"max_retries" yaml:"max_retries"`
}

type claimsView struct {
	Now  string         `json:"now" yaml:"now"`
	Rows []claimRowView `json:"rows" yaml:"rows"`
}

func claimsJSON(l *claimtable.Listing) claimsView {
	v := claimsView{Now: output.Time(l.Now), Rows: []claimRowView{}}
	for _, r := range l.Rows {
		v.Rows = append(v.Rows, claimRowView{ID: r.ID, Type: r.Type, State: string(r.State), Owner: r.Owner,
			Due: output.Time(r.Due), ClaimedUntil: output.Time(r.ClaimedUntil), Retries: r.Retries, MaxRetries: r.MaxRetries})
	}
	return v
}

// writeClaims renders a listing: JSON or YAML, a table on a terminal
// fitted into width columns (0: no limit) — the retries go first, then the
// due time, then the owner wraps — or tab-separated lines with every field
// when piped.
func writeClaims(w io.Writer, l *claimtable.Listing, f output.Format, tty bool, width int) error {
	switch f {
	case output.JSON:
		return output.WriteJSON(w, claimsJSON(l))
	case output.YAML:
		return output.WriteYAML(w, claimsJSON(l))
	}
	if tty && len(l.Rows) == 0 {
		_, err := io.WriteString(w, "No claimed, overdue or failed rows (ready and done rows are shown with --all).\n")
		return err
	}
	header := []string{"id", "type", "state", "owner", "due", "claimed_until", "retries", "max_retries"}
	if tty {
		header = []string{"ID", "TYPE", "STATE", "OWNER", "DUE (UTC)", "CLAIMED UNTIL (UTC)", "RETRIES"}
	}
	t := output.TableData{Header: header}
	if tty {
		t.Width, t.Drop = width, []string{"RETRIES", "DUE (UTC)"}
	}
	for _, r := range l.Rows {
		if tty {
			t.Rows = append(t.Rows, []string{strconv.FormatInt(r.ID, 10), r.Type, string(r.State), r.Owner, shortTime(r.Due), shortTime(r.ClaimedUntil), fmt.Sprintf("%d/%d", r.Retries, r.MaxRetries)})
			continue
		}
		t.Rows = append(t.Rows, []string{strconv.FormatInt(r.ID, 10), r.Type, string(r.State), r.Owner, output.Time(r.Due), output.Time(r.ClaimedUntil), strconv.Itoa(r.Retries), strconv.Itoa(r.MaxRetries)})
	}
	return output.WriteTable(w, t, tty)
}

func claimsReleaseRun(ctx context.Context, o *ClaimsOptions) error {
	switch {
	case o.Owner == "":
		return usageErrorf(o.Command, "--owner is required: name the worker whose rows to give back (claims ls shows the owners)")
	case !o.Yes && !o.DryRun && !o.IO.CanPrompt():
		return usageErrorf(o.Command, "refusing to give back the rows of %q without confirmation: not a terminal; pass --yes (or --dry-run to see what would change)", o.Owner)
	}
	if err := dialects.CheckOwner(o.Owner); err != nil {
		return &UsageError{Err: err, Command: o.Command}
	}
	cl, backend, target, err := o.open(ctx)
	if err != nil {
		return err
	}
	defer backend.Close()
	l, err := cl.List(ctx, claimtable.ListOptions{Owner: o.Owner, Limit: claimtable.MaxBatch})
	if err != nil {
		return adminError(err, target, o.Command)
	}
	var overdue, live []claimtable.Row
	for _, r := range l.Rows {
		switch r.State {
		case claimtable.StateOverdue:
			overdue = append(overdue, r)
		case claimtable.StateClaimed:
			live = append(live, r)
		}
	}
	plan := overdue
	if o.Force {
		plan = append(slices.Clone(overdue), live...)
	}
	switch {
	case len(overdue)+len(live) == 0:
		if note := unmappedNote(ctx, cl); note != "" {
			return negativef("%q holds no rows in the claimed status %q in %s; nothing changed: %s", o.Owner, cl.Table().Statuses.Claimed, cl.Table().Name, note)
		}
		return negativef("%q holds no claimed rows in %s; nothing to give back", o.Owner, cl.Table().Name)
	case len(plan) == 0:
		return negativef("refused: %q holds %d rows within their claim lease (until %s at the latest), so it may still be working on them; nothing changed: wait for the lease to pass, or add --force", o.Owner, len(live), shortTime(latestUntil(live)))
	}
	var b strings.Builder
	describeRelease(&b, o, cl.Table().Name, overdue, live)
	if o.DryRun {
		return o.reportRelease(b.String()+"Nothing changed (--dry-run).\n", plan, 0, false)
	}
	if !o.Yes {
		if err := o.confirmRelease(b.String(), len(plan)); err != nil {
			return err
		}
	}
	n, err := cl.ReleaseOwner(ctx, o.Owner, claimtable.ReleaseOptions{Force: o.Force})
	if err != nil {
		return adminError(err, target, o.Command)
	}
	msg := fmt.Sprintf("Gave back %d rows of %q in %s; they are ready again.\n", n, o.Owner, cl.Table().Name)
	if int(n) < len(plan) {
		msg += fmt.Sprintf("  %d rows changed in the meantime (completed, or claimed by another worker) and were left alone.\n", len(plan)-int(n))
	}
	return o.reportRelease(msg, plan, n, true)
}

func latestUntil(rows []claimtable.Row) (t time.Time) {
	for _, r := range rows {
		if r.ClaimedUntil.After(t) {
			t = r.ClaimedUntil
		}
	}
	return t
}

// describeRelease says which rows release gives back and which it keeps.
func describeRelease(w io.Writer, o *ClaimsOptions, table string, overdue, live []claimtable.Row) {
	fmt.Fprintf(w, "Worker %q in %s: %d overdue rows (lease passed), %d within their lease.\n", o.Owner, table, len(overdue), len(live))
	ids := func(rows []claimtable.Row) string {
		var s []string
		for i, r := range rows {
			if i == 20 {
				s = append(s, fmt.Sprintf("… %d more", len(rows)-i))
				break
			}
			s = append(s, strconv.FormatInt(r.ID, 10))
		}
		return strings.Join(s, ", ")
	}
	if len(overdue) > 0 {
		fmt.Fprintf(w, "  give back: %s\n", ids(overdue))
	}
	switch {
	case len(live) > 0 && o.Force:
		fmt.Fprintf(w, "  give back (--force, the worker may still run them): %s\n", ids(live))
	case len(live) > 0:
		fmt.Fprintf(w, "  keep (within their lease; --force gives them back too): %s\n", ids(live))
	}
	fmt.Fprintf(w, "  guard:  only rows still claimed by %q%s\n", o.Owner, map[bool]string{false: " with their lease passed", true: ""}[o.Force])
}

func (o *ClaimsOptions) confirmRelease(plan string, n int) error {
	return askYesNo(o.IO.In, o.IO.ErrOut, o.Factory.Scrubber.String(plan+fmt.Sprintf("Give back %d rows? [y/N] ", n)))
}

// claimsReleaseView is `claims release -o json`.
type claimsReleaseView struct {
	Owner    string         `json:"owner" yaml:"owner"`
	Force    bool           `json:"force" yaml:"force"`
	DryRun   bool           `json:"dry_run" yaml:"dry_run"`
	Changed  bool           `json:"changed" yaml:"changed"`
	Released int64          `json:"released" yaml:"released"`
	Rows     []claimRowView `json:"rows" yaml:"rows"`
}

func (o *ClaimsOptions) reportRelease(text string, plan []claimtable.Row, n int64, changed bool) error {
	var buf bytes.Buffer
	switch o.Global.Format {
	case output.JSON, output.YAML:
		rows := claimsJSON(&claimtable.Listing{Rows: plan}).Rows
		v := claimsReleaseView{Owner: o.Owner, Force: o.Force, DryRun: o.DryRun, Changed: changed && n > 0, Released: n, Rows: rows}
		write := output.WriteJSON
		if o.Global.Format == output.YAML {
			write = output.WriteYAML
		}
		if err := write(&buf, v); err != nil {
			return err
		}
	default:
		buf.WriteString(text)
	}
	_, err := io.WriteString(o.IO.Out, o.Factory.Scrubber.String(buf.String()))
	return err
}
