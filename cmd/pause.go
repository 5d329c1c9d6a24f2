package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/dsn"
	"github.com/schedlock/schedlock/internal/elide"
	"github.com/schedlock/schedlock/internal/iostreams"
	"github.com/schedlock/schedlock/internal/output"
)

// PauseOptions are the inputs of `schedlock pause NAME` and `schedlock
// resume NAME`.
type PauseOptions struct {
	IO      *iostreams.IOStreams
	Factory *Factory
	Global  *GlobalOptions
	Command string // command path, for usage errors
	Resume  bool   // resume instead of pause

	Name   string
	Table  string
	Preset string
	For    time.Duration
	Until  string // RFC 3339
	By     string
	Wait   time.Duration
	Create bool
	Yes    bool
	DryRun bool

	// now is the host clock (tests replace it).
	now func() time.Time
}

// NewCmdPause builds `schedlock pause`. runF replaces the run function in
// tests.
func NewCmdPause(f *Factory, g *GlobalOptions, runF func(context.Context, *PauseOptions) error) *cobra.Command {
	opts := &PauseOptions{IO: f.IO, Factory: f, Global: g, now: time.Now}
	c := &cobra.Command{
		Use:   "pause NAME (--for D | --until T)",
		Short: "Stop a job on every node until a time, without a deploy",
		Long: `pause stops the job whose lock is NAME on every node: until the pause ends,
'schedlock run' and programs using the lock package find the lock paused and
skip the job, with a line naming who paused it and until when.

The pause is the lock's own row in its lease table (schedlock, shedlock or
sys_sched_lock), taken by the owner "paused:WHO" with a lease that ends
when the pause does, on the database clock. What each runner does with it:

  table strategy    finds the lock held by the pause and skips; ShedLock
                    applications sharing the table skip the job too.
  session strategy  (advisory locks, GET_LOCK; the default on PostgreSQL and
                    MySQL) reads the lock's row in the lease table first —
                    the DSN's x-table/x-preset, else the native schedlock
                    table — and skips a paused lock. The job has no row
                    there: create the table once and pause with --create.
                    Without that table there is no pause to honour.
  Redis             the pause is the lock's own key; ShedLock nodes on that
                    Redis skip the job too.
  NATS              the pause is the lock's own key in its KV bucket; with
                    --preset shedlock ShedLock nodes on that bucket skip
                    the job too.
  etcd, ZooKeeper   cannot hold a pause: pause refuses (exit 2).

A pause lasts at most 366 days (8784h); pause again before it ends to go
on. NAME must have a row already (it has run once, or --create). A lock held by
a job that is running now is not taken from it: pause refuses (exit 3), or
waits up to --wait for the run to end. Pausing a paused lock replaces the
pause with the new one.

Every change is confirmed: a y/N prompt on a terminal, or --yes. Without a
terminal and without --yes, pause refuses (exit 2). --dry-run shows the lock
before and after and changes nothing.

Exit codes: 0 paused (or --dry-run), 1 error, 2 usage error or no
confirmation, 3 NAME has no row (without --create) or its job is running,
130 declined or interrupted. See docs/pause.md.`,
		Example: `  # Stop the nightly report everywhere for two hours
  schedlock pause nightly-report --for 2h --yes

  # Until a maintenance window ends, recorded as ops-oncall
  schedlock pause invoices --until 2026-12-24T06:00:00Z --by ops-oncall

  # A job that has not run yet, in ShedLock's table
  schedlock pause cleanup --preset shedlock --create --for 24h

  # What would change
  schedlock pause nightly-report --for 2h --dry-run`,
		Args:              pauseArgs,
		ValidArgsFunction: pauseNameCompletion(f, g, false),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Command = c.CommandPath()
			opts.Name = args[0]
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return pauseRun(c.Context(), opts)
		},
	}
	fl := c.Flags()
	addPauseTableFlags(c, opts)
	durationVar(fl, &opts.For, "for", 0, "how long the pause lasts, e.g. 2h (at most 8784h, 366 days)")
	fl.StringVar(&opts.Until, "until", "", "when the pause ends, RFC 3339, e.g. 2026-12-24T06:00:00Z (at most 366 days away)")
	fl.StringVar(&opts.By, "by", "", "who pauses, recorded as the owner paused:BY (default $USER@host)")
	durationVar(fl, &opts.Wait, "wait", 0, "wait up to this long for a running job to end (default: refuse at once)")
	fl.BoolVar(&opts.Create, "create", false, "pause a lock that has no row yet (a job that has not run, or runs on the session strategy)")
	return c
}

// NewCmdResume builds `schedlock resume`.
func NewCmdResume(f *Factory, g *GlobalOptions, runF func(context.Context, *PauseOptions) error) *cobra.Command {
	opts := &PauseOptions{IO: f.IO, Factory: f, Global: g, Resume: true, now: time.Now}
	c := &cobra.Command{
		Use:   "resume NAME",
		Short: "End a pause now, so the job runs again at its next start",
		Long: `resume ends the pause of NAME now: the next 'schedlock run' on any node takes
the lock as usual. The release is guarded by the pause's owner and token as
read, so a pause set again in between is left alone.

Confirmation as for pause: a y/N prompt, or --yes; no terminal and no --yes
refuses (exit 2); --dry-run changes nothing.

Exit codes: 0 resumed (or --dry-run), 1 error, 2 usage error or no
confirmation, 3 NAME is not paused, 130 declined or interrupted.`,
		Example: `  schedlock resume nightly-report --yes
  schedlock resume cleanup --preset shedlock --dry-run`,
		Args:              pauseArgs,
		ValidArgsFunction: pauseNameCompletion(f, g, true),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Command = c.CommandPath()
			opts.Name = args[0]
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return pauseRun(c.Context(), opts)
		},
	}
	addPauseTableFlags(c, opts)
	return c
}

func pauseArgs(c *cobra.Command, args []string) error {
	if len(args) != 1 {
		return &UsageError{Err: fmt.Errorf("%s takes one lock name, got %d arguments", c.Name(), len(args)), Command: c.CommandPath()}
	}
	return nil
}

func addPauseTableFlags(c *cobra.Command, opts *PauseOptions) {
	fl := c.Flags()
	fl.StringVar(&opts.Table, "table", "", "lock table, optionally schema.table (default: the known table that has NAME)")
	_ = c.RegisterFlagCompletionFunc("table", lockTableCompletion(opts.Factory, opts.Global, ""))
	fl.StringVar(&opts.Preset, "preset", "", "table layout: "+strings.Join(dialects.Presets(), ", ")+" (default: from the table name or its columns)")
	fl.BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "show what would change and change nothing")
	_ = c.RegisterFlagCompletionFunc("preset", valuesCompletion(dialects.Presets()))
}

// verb is the command's name.
func (o *PauseOptions) verb() string {
	if o.Resume {
		return "resume"
	}
	return "pause"
}

// validate checks the flags before anything is read.
func (o *PauseOptions) validate() error {
	usage := func(format string, args ...any) error { return usageErrorf(o.Command, format, args...) }
	if err := dialects.CheckName(o.Name); err != nil {
		return &UsageError{Err: err, Command: o.Command}
	}
	if o.Resume {
		return o.confirmable()
	}
	switch {
	case o.For == 0 && o.Until == "":
		return usage("say how long: --for 2h, or --until 2026-12-24T06:00:00Z")
	case o.For < 0:
		return usage("--for must be positive, got %s", o.For)
	case o.For > dialects.MaxPause:
		return usage("--for %s is longer than a pause may last, 366 days (8784h): pause again before it ends to go on, or take the job off its schedule to stop it for good", o.For)
	case o.Wait < 0:
		return usage("--wait must not be negative, got %s", o.Wait)
	}
	if o.Until != "" {
		t, err := time.Parse(time.RFC3339, o.Until)
		if err != nil {
			return usage("--until %q is not an RFC 3339 time: write it as 2026-12-24T06:00:00Z", o.Until)
		}
		if !t.After(o.now()) {
			return usage("--until %s is not in the future", t.UTC().Format(time.RFC3339))
		}
		if t.Sub(o.now()) > dialects.MaxPause {
			return usage("--until %s is more than 366 days (8784h) away, longer than a pause may last: pause again before it ends to go on, or take the job off its schedule to stop it for good", t.UTC().Format(time.RFC3339))
		}
	}
	if o.By == "" {
		o.By = defaultPauser(o.Factory.Getenv)
	}
	if err := dialects.CheckOwner(dialects.PauseOwner(o.By)); err != nil {
		return &UsageError{Err: fmt.Errorf("--by: %w", err), Command: o.Command}
	}
	return o.confirmable()
}

// confirmable refuses a change nobody can confirm.
func (o *PauseOptions) confirmable() error {
	if !o.Yes && !o.DryRun && !o.IO.CanPrompt() {
		return usageErrorf(o.Command, "refusing to %s %q without confirmation: not a terminal; pass --yes (or --dry-run to see what would change)", o.verb(), o.Name)
	}
	return nil
}

// defaultPauser is $USER@host, or what of it is known.
func defaultPauser(getenv func(string) string) string {
	name := getenv("USER")
	if u, err := user.Current(); name == "" && err == nil {
		name = u.Username
	}
	host, _ := os.Hostname()
	switch {
	case name != "" && host != "":
		return name + "@" + host
	case host != "":
		return host
	case name != "":
		return name
	}
	return "schedlock"
}

// pausePlan is the lock pause or resume acts on, as read.
type pausePlan struct {
	table dialects.Table
	// name is the lock's name in table (nameIn; lockOf.inTable).
	name   string
	before *dialects.LockEntry // nil: no row yet (--create)
	length time.Duration       // pause: how long, from the database's now
	until  time.Time           // pause: its expected end
	// deletesKey: the backend ends a pause by deleting the key (the
	// stores), so resume leaves the lock free.
	deletesKey bool
}

func pauseRun(ctx context.Context, o *PauseOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	l, err := findOneLock(ctx, o.Factory, o.Global, o.Command, o.Name, o.Table, o.Preset, true, sessionNameFlags{})
	if err != nil {
		return err
	}
	defer l.backend.Close()
	pauser, ok := l.backend.(dialects.Pauser)
	if !ok {
		return &UsageError{Err: missingFeature(l.backend, "cannot hold a pause: "+o.verb()+" needs a lease table on a SQL database or Redis keys"), Command: o.Command}
	}
	o.Name = l.name
	target, db, found, tables := l.target, l.db, l.found, l.tables
	plan, err := o.plan(found, tables)
	if err != nil {
		return err
	}
	if plan.before != nil {
		plan.name = nameIn(*plan.before, o.Name)
	} else if plan.table, plan.name, err = l.inTable(o.Command, plan.table); err != nil {
		return err
	}
	plan.table.TimeZone = l.zone
	plan.deletesKey = dialects.ReleaseDeletesKey(l.backend)
	if o.DryRun {
		return o.report(plan, o.predict(plan), false)
	}
	if !o.Yes {
		if err := o.confirm(plan); err != nil {
			return err
		}
	}
	if err := o.apply(ctx, pauser, plan); err != nil {
		return o.applyError(err, target)
	}
	after, err := readAfter(ctx, db, &unlockPlan{lock: dialects.LockEntry{Name: plan.name}, table: plan.table})
	if err != nil {
		return adminError(err, target, o.Command)
	}
	return o.report(plan, after, true)
}

// plan picks the table row to act on, or says why there is none.
func (o *PauseOptions) plan(found *dialects.Listing, given []dialects.Table) (*pausePlan, error) {
	var rows []dialects.LockEntry
	session := false
	for _, e := range found.Locks {
		switch {
		case e.Strategy == dialects.StrategySession:
			session = true
		case e.Preset == dialects.PresetLiquibase:
		default:
			rows = append(rows, e)
		}
	}
	switch {
	case len(rows) > 1:
		var where []string
		for _, e := range rows {
			where = append(where, e.Source)
		}
		return nil, usageErrorf(o.Command, "lock %q has rows in several tables (%s): choose one with --table", o.Name, elide.Whole(strings.Join(where, ", ")))
	case len(rows) == 0 && o.Resume:
		return nil, negativef("lock %q is not paused: no lock table has a row for it; nothing changed", o.Name)
	case len(rows) == 0 && session && !o.Create:
		return nil, usageErrorf(o.Command, "lock %q is a session lock, which ends with its connection: add --create to keep the pause in the lease table, which session runners read before they lock", o.Name)
	case len(rows) == 0 && !o.Create:
		return nil, negativef("lock %q has no row in %s: nothing to pause; check the name (schedlock locks ls --all), or add --create to pause a job that has not run yet", o.Name, tableNames(found.Tables))
	case len(rows) == 0:
		return o.createPlan(found, given)
	}
	e := rows[0]
	p := &pausePlan{table: dialects.Table{Preset: e.Preset, Name: e.Source}, before: &e}
	if o.Resume {
		if e.State != dialects.StatePaused {
			return nil, negativef("lock %q in table %s is not paused (it is %s); nothing changed", o.Name, e.Source, e.State)
		}
		return p, nil
	}
	if e.State == dialects.StateHeld && o.Wait == 0 {
		return nil, negativef("lock %q in table %s is held by %q until %s: its job is running, and a pause does not take the lock from it; nothing changed: pause it when the run ends, or add --wait to wait for it", o.Name, e.Source, e.Owner, untilCell(e, false))
	}
	if err := o.setLength(p, e.DBNow); err != nil {
		return nil, err
	}
	return p, nil
}

// createPlan pauses a lock with no row, in the one table it can go to.
func (o *PauseOptions) createPlan(found *dialects.Listing, given []dialects.Table) (*pausePlan, error) {
	var t dialects.Table
	switch {
	case len(given) == 1:
		t = namedAsFound(given[0], found.Tables)
	case len(found.Tables) == 1:
		t = found.Tables[0]
	case len(found.Tables) > 1:
		return nil, usageErrorf(o.Command, "lock %q has no row yet and there are several lock tables (%s): choose one with --table or --preset", o.Name, tableNames(found.Tables))
	}
	if t.Preset == dialects.PresetLiquibase {
		return nil, usageErrorf(o.Command, "Liquibase's lock table has no lease end to pause by: choose a lease table with --table or --preset")
	}
	p := &pausePlan{table: t}
	if err := o.setLength(p, time.Time{}); err != nil {
		return nil, err
	}
	return p, nil
}

// namedAsFound is t as the listing names it: a table given by preset
// alone (--preset shedlock) takes the name its rows are listed under
// (the table's, or on Redis ShedLock's env), so the change names it and
// reads it back.
func namedAsFound(t dialects.Table, found []dialects.Table) dialects.Table {
	for _, f := range found {
		if f.Preset == t.Preset && (t.Name == "" || strings.EqualFold(f.Name, t.Name)) {
			f.TimeZone = t.TimeZone
			return f
		}
	}
	if t.Name == "" {
		if s, err := t.Schema(); err == nil {
			t.Name = s.Table
		}
	}
	return t
}

// setLength turns --for or --until into the pause's length, measured from
// the database's now when it is known (dbNow), else from this host's.
// validate bounded --until by this host's clock; a database clock behind
// it can make the length pass MaxPause, which is refused here, before
// anything is written.
func (o *PauseOptions) setLength(p *pausePlan, dbNow time.Time) error {
	now := dbNow
	if now.IsZero() {
		now = o.now().UTC()
	}
	p.length = o.For
	if o.Until != "" {
		t, _ := time.Parse(time.RFC3339, o.Until) // checked by validate
		p.length = t.Sub(now)
		if p.length < time.Millisecond {
			p.length = time.Millisecond
		}
		if p.length > dialects.MaxPause {
			return usageErrorf(o.Command, "--until %s is more than 366 days (8784h) after the database's now (%s), longer than a pause may last", t.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
		}
	}
	p.until = now.Add(p.length)
	return nil
}

func tableNames(tables []dialects.Table) string {
	if len(tables) == 0 {
		return "any lock table (none was found: name one with --table or --preset)"
	}
	names := make([]string, 0, len(tables))
	for _, t := range tables {
		names = append(names, t.Name)
	}
	return "table " + strings.Join(names, ", ")
}

// predict is the lock as the change would leave it.
func (o *PauseOptions) predict(p *pausePlan) []dialects.LockEntry {
	e := dialects.LockEntry{Name: o.Name, Strategy: dialects.StrategyTable, Source: p.table.Name, Preset: p.table.Preset}
	if p.before != nil {
		e = *p.before
	}
	if o.Resume {
		if p.deletesKey {
			return []dialects.LockEntry{freedByDeleting(e)}
		}
		e.Until = e.DBNow
		e.SetRowState(dialects.Row{Owner: e.Owner, LockedAt: e.LockedAt, Until: e.Until, DBNow: e.DBNow})
		return []dialects.LockEntry{e}
	}
	e.Owner, e.State, e.Until = dialects.PauseOwner(o.By), dialects.StatePaused, p.until
	if !e.DBNow.IsZero() {
		e.LockedAt = e.DBNow
	}
	return []dialects.LockEntry{e}
}

// confirm shows the plan on stderr and asks; anything but y or yes
// declines (exit 130).
func (o *PauseOptions) confirm(p *pausePlan) error {
	var b strings.Builder
	o.describe(&b, p)
	fmt.Fprintf(&b, "%s it? [y/N] ", strings.ToUpper(o.verb()[:1])+o.verb()[1:])
	return askYesNo(o.IO.In, o.IO.ErrOut, o.Factory.Scrubber.String(b.String()))
}

// describe writes the lock before and after the change.
func (o *PauseOptions) describe(w io.Writer, p *pausePlan) {
	fmt.Fprintf(w, "Lock %q in table %s (%s):\n", o.Name, p.table.Name, dash(p.table.Preset))
	before := "no row yet"
	if p.before != nil {
		before = describeRow(*p.before)
	}
	fmt.Fprintf(w, "  before: %s\n", before)
	after := describeRow(o.predict(p)[0])
	if o.Resume {
		after += " — the next run on any node takes it"
	} else {
		after += fmt.Sprintf(" — no node runs it for %s", humanDuration(p.length))
	}
	fmt.Fprintf(w, "  after:  %s\n", after)
	if !o.Resume && p.before != nil && p.before.State == dialects.StateHeld {
		fmt.Fprintf(w, "  wait:   up to %s for the running job to end\n", o.Wait)
	}
}

// apply makes the change.
func (o *PauseOptions) apply(ctx context.Context, pauser dialects.Pauser, p *pausePlan) error {
	if o.Resume {
		return pauser.Resume(ctx, p.table, p.name)
	}
	return pauser.Pause(ctx, p.table, p.name, dialects.PauseRequest{By: o.By, For: p.length, Wait: o.Wait})
}

// applyError words a change the database refused.
func (o *PauseOptions) applyError(err error, target *dsn.DSN) error {
	var held *dialects.HeldError
	switch {
	case errors.Is(err, dialects.ErrNotPaused):
		return negativef("lock %q is no longer paused; nothing changed", o.Name)
	case errors.As(err, &held) && !errors.Is(err, dialects.ErrPaused):
		msg := held.Error()
		if o.Wait > 0 {
			msg += fmt.Sprintf(" (waited %s)", o.Wait)
		}
		return negativef("not paused: %s, and a pause does not take the lock from a running job; nothing changed", msg)
	case errors.Is(err, dialects.ErrNotOwner), errors.Is(err, dialects.ErrLeaseLost):
		return negativef("lock %q changed hands while it was being %sd; nothing changed: look again with schedlock locks ls", o.Name, o.verb())
	}
	return adminError(err, target, o.Command)
}

// pauseView is `pause -o json` and `resume -o json`: the action, whether it
// was a dry run and changed anything, the lock before (null: no row yet)
// and after.
type pauseView struct {
	Action  string    `json:"action"`
	DryRun  bool      `json:"dry_run"`
	Changed bool      `json:"changed"`
	Before  *lockView `json:"before"`
	After   *lockView `json:"after"`
}

// report writes the outcome (or, for --dry-run, the plan) to stdout.
func (o *PauseOptions) report(p *pausePlan, after []dialects.LockEntry, changed bool) error {
	var buf bytes.Buffer
	switch o.Global.Format {
	case output.JSON, output.YAML:
		v := pauseView{Action: o.verb(), DryRun: o.DryRun, Changed: changed}
		if p.before != nil {
			b := lockJSON(dialects.ApplyNamespace([]dialects.LockEntry{*p.before}, "")[0])
			v.Before = &b
		}
		if len(after) > 0 {
			a := lockJSON(dialects.ApplyNamespace(after[:1], "")[0])
			v.After = &a
		}
		write := output.WriteJSON
		if o.Global.Format == output.YAML {
			write = output.WriteYAML
		}
		if err := write(&buf, v); err != nil {
			return err
		}
	default:
		if !changed {
			o.describe(&buf, p)
			fmt.Fprintln(&buf, "Nothing changed (--dry-run).")
			break
		}
		past := "Paused"
		if o.Resume {
			past = "Resumed"
		}
		fmt.Fprintf(&buf, "%s lock %q in table %s.\n", past, o.Name, p.table.Name)
		if len(after) > 0 {
			fmt.Fprintf(&buf, "  now: %s\n", describeRow(after[0]))
		} else {
			fmt.Fprintln(&buf, "  now: free, no row left")
		}
	}
	_, err := io.WriteString(o.IO.Out, o.Factory.Scrubber.String(buf.String()))
	return err
}
