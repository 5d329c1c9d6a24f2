package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/dsn"
	"github.com/schedlock/schedlock/internal/elide"
	"github.com/schedlock/schedlock/internal/iostreams"
	"github.com/schedlock/schedlock/internal/output"
)

// UnlockOptions are the inputs of `schedlock unlock NAME`.
type UnlockOptions struct {
	IO      *iostreams.IOStreams
	Factory *Factory
	Global  *GlobalOptions
	Command string // command path, for usage errors

	Name        string
	Key         string // a session lock's raw key (--key), instead of Name
	Table       string
	Preset      string
	Owner       string
	Force       bool
	KillSession bool
	Yes         bool
	DryRun      bool
	// SessionNames are --session-names and --session-key: how NAME's
	// session lock is named on the server.
	SessionNames sessionNameFlags

	// tableZone is the lock tables' writer time zone (--table-time-zone
	// or x-time-zone), resolved by unlockRun.
	tableZone string

	// beforeChange, when set, runs after the confirmation and right before
	// the change; tests use it to change the lock in between.
	beforeChange func(ctx context.Context, db dialects.LockBreaker)
}

// killWaitFor bounds how long unlock waits for a terminated session's
// lock to be freed.
const killWaitFor = 5 * time.Second

// NewCmdUnlock builds `schedlock unlock`. runF replaces the run function
// in tests.
func NewCmdUnlock(f *Factory, g *GlobalOptions, runF func(context.Context, *UnlockOptions) error) *cobra.Command {
	opts := &UnlockOptions{IO: f.IO, Factory: f, Global: g}
	c := &cobra.Command{
		Use:   "unlock NAME | unlock --key KEY --kill-session",
		Short: "Free a stuck lock, safely",
		Long: `unlock frees the lock called NAME.

A lock whose holder may still be working is never freed by accident: a
table lock whose lease has not run out (and Liquibase's lock, which has no
lease end) is released only with --owner naming its current owner, or with
--force; without either, unlock refuses (exit 3) and says who holds it and
until when. A lock that is stale (its holder is known to be gone) is
released under the owner and token just read.

A table lock (schedlock, shedlock, sys_sched_lock tables) is released in one
statement that changes the row only while it is still held by the owner of
--owner (and, with the native table, the fencing token read), so a lock
that changed hands in the meantime is left alone. --force releases it
whoever holds it. Releasing ends the lease now; the row and its owner stay,
as they do when a job releases its lock.

Liquibase's DATABASECHANGELOGLOCK is the lock "liquibase" and goes through
the same guard: LOCKED, LOCKGRANTED and LOCKEDBY are cleared only while
LOCKEDBY is the owner of --owner (any owner with --force).

A session lock (PostgreSQL advisory lock, MySQL GET_LOCK) can only be freed
by terminating the session that holds it: --kill-session shows that session
first, and terminates it only if it still holds the lock; its open
transaction is rolled back and every lock it holds is freed. A session lock
known only by the key locks ls shows (another tool's lock, such as
golang-migrate's or Flyway's) is named with --key instead of NAME: a
PostgreSQL advisory key (a bigint, or k1,k2) or a MySQL GET_LOCK name.

Every change is confirmed: a y/N prompt on a terminal, or --yes. Without a
terminal and without --yes, unlock refuses (exit 2). --dry-run shows the lock
before and after and changes nothing; it refuses what unlock would refuse,
with the same exit code.

Exit codes: 0 freed (or --dry-run of a change unlock would make), 1 error,
2 usage error or no confirmation, 3 the lock is not held, is live and
neither --owner nor --force was given, is held by another owner than
--owner, changed hands before the change, or is a session lock and
--kill-session was not given, 130 declined at the prompt or interrupted.`,
		Example: `  # See what would change
  schedlock unlock nightly-report --owner host-a --dry-run

  # Release it if host-a still holds it, without a prompt (scripts)
  schedlock unlock nightly-report --owner host-a --yes

  # Release it whoever holds it (asks first)
  schedlock unlock nightly-report --preset shedlock --force

  # Liquibase's stuck DATABASECHANGELOGLOCK, if build-7 still holds it
  schedlock unlock liquibase --owner 'build-7 (10.0.0.5)'

  # A PostgreSQL advisory lock: terminate the backend that holds it
  schedlock unlock nightly-report --dsn 'postgres://ops@db1/jobs' --kill-session

  # A migration tool's advisory lock, known only by its key (see locks ls)
  schedlock unlock --key 3888200822 --dsn 'postgres://ops@db1/jobs' --kill-session`,
		ValidArgsFunction: lockNameCompletion(f, g, true, ""),
		Args: func(c *cobra.Command, args []string) error {
			if opts.Key != "" {
				return keyArgs(c, args)
			}
			if len(args) != 1 {
				return &UsageError{Err: fmt.Errorf("unlock takes one lock name, got %d arguments", len(args)), Command: c.CommandPath()}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.Command = c.CommandPath()
			if len(args) > 0 {
				opts.Name = args[0]
			}
			if runF != nil {
				return runF(c.Context(), opts)
			}
			if opts.Key != "" {
				return unlockKeyRun(c.Context(), opts)
			}
			return unlockRun(c.Context(), opts)
		},
	}
	fl := c.Flags()
	fl.StringVar(&opts.Table, "table", "", "lock table, optionally schema.table (default: every known table that exists)")
	_ = c.RegisterFlagCompletionFunc("table", lockTableCompletion(f, g, ""))
	fl.StringVar(&opts.Preset, "preset", "", "table layout: "+strings.Join(dialects.AdminPresets(), ", ")+" (default: from the table name or its columns)")
	fl.StringVar(&opts.Owner, "owner", "", "release a live lock only while this owner holds it")
	_ = c.RegisterFlagCompletionFunc("owner", lockOwnerCompletion(f, g))
	fl.BoolVar(&opts.Force, "force", false, "release a table lock whoever holds it, even a live one (still asks)")
	fl.BoolVar(&opts.KillSession, "kill-session", false, "free a session lock by terminating the session that holds it")
	fl.StringVar(&opts.Key, "key", "", "the session lock's key as locks ls shows it, instead of NAME (with --kill-session)")
	_ = c.RegisterFlagCompletionFunc("key", lockKeyCompletion(f, g))
	addSessionNameFlags(c, &opts.SessionNames)
	fl.BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "show what would change and change nothing")
	_ = c.RegisterFlagCompletionFunc("preset", locksCompletion(dialects.AdminPresets()))
	return c
}

// unlockAction is what unlock does to the lock.
type unlockAction string

const (
	actionRelease      unlockAction = "release"
	actionForceRelease unlockAction = "force-release"
	actionKillSession  unlockAction = "kill-session"
)

// unlockPlan is the change unlock proposes, from the lock as read.
type unlockPlan struct {
	action unlockAction
	lock   dialects.LockEntry
	table  dialects.Table // table locks
	owner  string         // the guard of a release
	byKey  bool           // a session lock named by its key (--key)
	// deletesKey: the backend frees the lock by deleting its key (the
	// stores), so the lock is left free rather than expired.
	deletesKey bool
	// deletesRow: the table's release deletes the row (sys_sched_lock),
	// so the lock is left free, with no row.
	deletesRow bool
}

// presetDeletesRow reports whether a release on a table of preset deletes
// the row (dialects.Schema.ReleaseDeletesRow: sys_sched_lock).
func presetDeletesRow(preset string) bool {
	s, err := dialects.Table{Preset: preset}.Schema()
	return err == nil && s.ReleaseDeletesRow()
}

// validate checks the flags before anything is read. Whether the change
// can be confirmed is checked once the lock is read (carryOut): a lock
// that --yes would not free either gets that answer (exit 3) first.
func (o *UnlockOptions) validate() error {
	switch {
	case o.Force && o.Owner != "":
		return usageErrorf(o.Command, "--force and --owner exclude each other: --force releases whoever holds the lock, --owner only that owner")
	case o.KillSession && (o.Force || o.Owner != ""):
		return usageErrorf(o.Command, "--kill-session terminates the session holding a session lock; --force and --owner apply to table locks")
	case o.KillSession && (o.Table != "" || o.Preset != ""):
		return usageErrorf(o.Command, "--kill-session frees a session lock; --table and --preset apply to table locks")
	}
	return dialects.CheckName(o.Name)
}

func unlockRun(ctx context.Context, o *UnlockOptions) error {
	if err := o.validate(); err != nil {
		var usage *UsageError
		if !errors.As(err, &usage) {
			err = &UsageError{Err: err, Command: o.Command}
		}
		return err
	}
	l, err := findOneLock(ctx, o.Factory, o.Global, o.Command, o.Name, o.Table, o.Preset, true, o.SessionNames)
	if err != nil {
		return err
	}
	defer l.backend.Close()
	// From here on the lock is known by its stored name ("staging::nightly").
	o.Name, o.tableZone = l.name, l.zone
	target, db, found := l.target, l.db, l.found
	plan, err := o.plan(found, dialects.ReleaseDeletesKey(db))
	if err != nil {
		return err
	}
	return o.carryOut(ctx, db, target, plan)
}

// plan picks the lock to free from what FindLock read, or says why there
// is nothing unlock may do (exit 3) or the call is ambiguous (exit 2).
// deletesKey: the backend frees a lock by deleting its key
// (dialects.KeyDeleter), so a free lock may have none.
func (o *UnlockOptions) plan(found *dialects.Listing, deletesKey bool) (*unlockPlan, error) {
	var tableHeld, sessionHeld []dialects.LockEntry
	for _, e := range found.Locks {
		switch {
		case o.Force && e.Strategy == dialects.StrategyTable && e.State == dialects.StateExpired && presetDeletesRow(e.Preset):
			// An expired row of a table whose applications lock by INSERT
			// refuses them until it is deleted: --force deletes it.
			tableHeld = append(tableHeld, e)
		case e.State != dialects.StateHeld && e.State != dialects.StateStale:
		case e.Strategy == dialects.StrategySession:
			sessionHeld = append(sessionHeld, e)
		default:
			tableHeld = append(tableHeld, e)
		}
	}
	if o.KillSession {
		if len(sessionHeld) == 0 {
			msg := shortf("lock %q is not held as a session lock", o.Name) + keyHint(o.Name)
			if len(tableHeld) > 0 {
				msg += shortf("; it is held in table %s: unlock it without --kill-session", tableHeld[0].Source)
			}
			return nil, negative(msg)
		}
		if len(sessionHeld) > 1 && !oneSession(sessionHeld) {
			return nil, usageErrorf(o.Command, "%s", elide.Whole(severalSessionsMessage(o.Name, sessionHeld)))
		}
		if h := sessionHeld[0].Holder; h == nil || h.SessionID == "" {
			return nil, fmt.Errorf("lock %q is held by %s: cannot terminate it; run detect to see the grant that allows listing locks", o.Name, describeSession(h))
		}
		// A lock found under another stored name than NAME's own (MySQL's
		// GET_LOCK('NAME') of another client) is looked up again by its key.
		e := sessionHeld[0]
		return &unlockPlan{action: actionKillSession, lock: e, byKey: e.Name != o.Name}, nil
	}
	switch {
	case len(tableHeld) == 0 && len(sessionHeld) > 0:
		return nil, negativef("lock %q is a session lock held by %s; only ending that session frees it: add --kill-session", o.Name, elide.Whole(describeSession(sessionHeld[0].Holder)))
	case len(tableHeld) == 0:
		return nil, negative(notHeldMessage(o.Name, found, deletesKey))
	case len(tableHeld) > 1:
		var where []string
		for _, e := range tableHeld {
			where = append(where, e.Source)
		}
		return nil, usageErrorf(o.Command, "lock %q is held in several tables (%s): choose one with --table", o.Name, elide.Whole(strings.Join(where, ", ")))
	}
	e := tableHeld[0]
	p := &unlockPlan{action: actionRelease, lock: e, table: dialects.Table{Preset: e.Preset, Name: e.Source, TimeZone: o.tableZone}, owner: e.Owner}
	switch {
	case o.Force:
		p.action, p.owner = actionForceRelease, ""
	case o.Owner != "" && o.Owner != e.Owner:
		return nil, negativef("refused: lock %q is held by %q, not by %q; nothing changed", o.Name, e.Owner, o.Owner)
	case e.Owner == "":
		return nil, negativef("lock %q in table %s records no owner, so no owner check can guard its release: use --force", o.Name, e.Source)
	case o.Owner == "" && e.State == dialects.StateHeld:
		return nil, negative(liveLockMessage(o.Name, e))
	}
	return p, nil
}

// severalSessionsMessage refuses, in one line, to choose between the
// session locks that a name finds: on MySQL schedlock's scoped
// "DATABASE/NAME" and GET_LOCK('NAME') of another client. Each is named
// by its key, which unlock --key takes.
func severalSessionsMessage(name string, held []dialects.LockEntry) string {
	var each []string
	for _, e := range held {
		each = append(each, shortf("key %q by session %s", e.Key, sessionIDOf(e.Holder)))
	}
	return shortf("lock %q is held as %d session locks", name, len(held)) + " (" + strings.Join(each, "; ") + "): choose one with --key KEY --kill-session"
}

// liveLockMessage refuses, in one line, to free a lock whose holder may
// still be working: a lease that has not run out, or Liquibase's lock,
// which has no lease end. It names the owner, the lease end and the two
// ways on: --owner (released only while that owner still holds it) and
// --force.
func liveLockMessage(name string, e dialects.LockEntry) string {
	lease := "until " + untilCell(e, false)
	if e.Until.IsZero() || e.Until.Equal(dialects.HeldForGood) {
		lease = "with no lease end"
		if !e.LockedAt.IsZero() {
			lease = "since " + shortTime(e.LockedAt) + ", with no lease end"
		}
	}
	return shortf("refused: lock %q in table %s is held by %q %s, so its job may still be running; nothing changed: add --owner %s to release it while that owner holds it, or --force",
		name, e.Source, e.Owner, lease, elide.String(shellWord(e.Owner), elide.MaxArgRunes))
}

// shellWord quotes s for a POSIX shell when it is not a plain word.
func shellWord(s string) string {
	plain := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:/@%+=,", r)) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// notHeldMessage says a lock is not held, and what was found instead;
// deletesKey as for plan.
func notHeldMessage(name string, found *dialects.Listing, deletesKey bool) string {
	msg := shortf("lock %q is not held", name)
	for _, e := range found.Locks {
		if e.Strategy != dialects.StrategyTable {
			continue
		}
		switch by, paused := dialects.PausedBy(e.Owner); {
		case paused && e.State == dialects.StatePaused:
			return msg + shortf(": it is paused by %s until %s in table %s; end the pause with schedlock resume %s", by, shortTime(e.Until), e.Source, shellWord(name))
		case !e.Until.IsZero() && e.Owner != "" && presetDeletesRow(e.Preset):
			return msg + shortf(": its lease in table %s ended at %s (last owner %s), but its row stays and refuses applications that lock by INSERT: add --force to delete it", e.Source, shortTime(e.Until), e.Owner)
		case !e.Until.IsZero() && e.Owner != "":
			return msg + shortf(": its lease in table %s ended at %s (last owner %s); nothing to unlock", e.Source, shortTime(e.Until), e.Owner)
		default:
			return msg + shortf(": table %s shows it %s; nothing to unlock", e.Source, e.State)
		}
	}
	switch {
	case deletesKey:
		msg += ": no key holds it (a released or expired lock leaves none); nothing to unlock"
	case len(found.Tables) == 0:
		msg += " (no lock table was found: name one with --table or --preset)"
	}
	return msg
}

func negative(msg string) error {
	return &ExitError{Code: CodeNegative, Err: errors.New(msg)}
}

// negativef is negative with a formatted message whose long string
// arguments (names, owners) are cut to a readable start.
func negativef(format string, args ...any) error {
	return negative(shortf(format, args...))
}

// shortf is fmt.Sprintf with long string arguments cut (elide.Args).
func shortf(format string, args ...any) string {
	return fmt.Sprintf(format, elide.Args(args)...)
}

// confirm shows the plan on stderr and asks; anything but y or yes
// declines (exit 130).
func (o *UnlockOptions) confirm(p *unlockPlan) error {
	var b strings.Builder
	describePlan(&b, p)
	question := "Release it? [y/N] "
	if p.action == actionKillSession {
		question = fmt.Sprintf("Terminate session %s? [y/N] ", p.lock.Holder.SessionID)
	}
	b.WriteString(question)
	return askYesNo(o.IO.In, o.IO.ErrOut, o.Factory.Scrubber.String(b.String()))
}

// describePlan writes what the lock is and what the change would do.
func describePlan(w io.Writer, p *unlockPlan) {
	e := p.lock
	switch p.action {
	case actionKillSession:
		fmt.Fprintf(w, "Lock %s is a session lock held by %s.\n", lockLabel(e), describeSession(e.Holder))
		fmt.Fprintf(w, "  change: terminate session %s; its open transaction is rolled back and every lock it holds is freed\n", e.Holder.SessionID)
		fmt.Fprintf(w, "  guard:  only if session %s still holds the lock\n", e.Holder.SessionID)
		return
	}
	fmt.Fprintf(w, "Lock %s in table %s (%s):\n", lockLabel(e), e.Source, e.Preset)
	fmt.Fprintf(w, "  before: %s\n", describeRow(e))
	after := "no row — it is deleted, so the next acquire (or INSERT) takes it"
	if !p.deletesRow {
		after = describeRow(predictAfter(p)[0])
	}
	switch {
	case p.deletesRow:
	case p.deletesKey:
		after += " — its key is deleted, so the next acquire takes it"
	case e.Preset != dialects.PresetLiquibase:
		after += " — the lease ends now, so the next acquire takes it"
	}
	fmt.Fprintf(w, "  after:  %s\n", after)
	if p.action == actionForceRelease {
		fmt.Fprintf(w, "  guard:  none (--force): released whoever holds it then\n")
		return
	}
	guard := fmt.Sprintf("only while %q still holds it", p.owner)
	if e.HasToken {
		guard += fmt.Sprintf(" with token %d", e.Token)
	}
	fmt.Fprintf(w, "  guard:  %s\n", guard)
}

func lockLabel(e dialects.LockEntry) string {
	switch {
	case e.Name != "" && e.Key != "":
		return fmt.Sprintf("%q (key %s)", e.Name, e.Key)
	case e.Name != "":
		return fmt.Sprintf("%q", e.Name)
	case e.Tool != "":
		return "key " + e.Key + " (" + e.Tool + ")"
	}
	return "key " + e.Key
}

// describeRow says a table lock's state in one line.
func describeRow(e dialects.LockEntry) string {
	s := string(e.State)
	if e.Owner != "" {
		s += ", owner " + e.Owner
	}
	if !e.LockedAt.IsZero() {
		s += ", locked at " + shortTime(e.LockedAt)
	}
	if !e.Until.IsZero() {
		s += ", until " + untilCell(e, false)
	}
	if e.HasToken {
		s += fmt.Sprintf(", token %d", e.Token)
	}
	return s
}

// predictAfter is the lock as the change would leave it: a released lease
// ends at the database's now and keeps its owner; a store's key is
// deleted, leaving the lock free; Liquibase's row is cleared; a
// terminated session's lock is gone (no entry).
func predictAfter(p *unlockPlan) []dialects.LockEntry {
	e := p.lock
	switch {
	case p.action == actionKillSession:
		return nil
	case p.deletesRow:
		return nil
	case p.deletesKey:
		e = freedByDeleting(e)
	case e.Preset == dialects.PresetLiquibase:
		e.State, e.Owner, e.LockedAt = dialects.StateFree, "", time.Time{}
	default:
		e.Until = e.DBNow
		e.SetRowState(dialects.Row{Owner: e.Owner, LockedAt: e.LockedAt, Until: e.Until, DBNow: e.DBNow})
	}
	return []dialects.LockEntry{e}
}

// freedByDeleting is e once its key is deleted: free, with no owner, no
// lease and no token (etcd's and ZooKeeper's go with the key; Redis's
// counter stays, and the next acquire's token is still larger).
func freedByDeleting(e dialects.LockEntry) dialects.LockEntry {
	e.State, e.Owner, e.LockedAt, e.Until = dialects.StateFree, "", time.Time{}, time.Time{}
	e.Token, e.HasToken = 0, false
	return e
}

// carryOut shows plan (--dry-run), or confirms it, applies it and reports
// the lock as it is after the change. Without a terminal and without --yes
// a change that would be made is refused (exit 2) before anything is
// written.
func (o *UnlockOptions) carryOut(ctx context.Context, db dialects.LockBreaker, target *dsn.DSN, plan *unlockPlan) error {
	if !o.Yes && !o.DryRun && !o.IO.CanPrompt() {
		what := strconv.Quote(o.Name)
		if plan.byKey {
			what = "key " + o.Key
		}
		return usageErrorf(o.Command, "refusing to unlock %s without confirmation: not a terminal; pass --yes (or --dry-run to see what would change)", what)
	}
	plan.deletesKey = plan.action != actionKillSession && dialects.ReleaseDeletesKey(db)
	plan.deletesRow = plan.action != actionKillSession && presetDeletesRow(plan.lock.Preset)
	if o.DryRun {
		return o.report(plan, predictAfter(plan), false)
	}
	if !o.Yes {
		if err := o.confirm(plan); err != nil {
			return err
		}
	}
	if o.beforeChange != nil {
		o.beforeChange(ctx, db)
	}
	if err := o.apply(ctx, db, plan); err != nil {
		return adminError(err, target, o.Command)
	}
	after, err := readAfter(ctx, db, plan)
	if err != nil {
		return adminError(err, target, o.Command)
	}
	return o.report(plan, after, true)
}

// apply makes the change, each kind with its guard.
func (o *UnlockOptions) apply(ctx context.Context, db dialects.LockBreaker, p *unlockPlan) error {
	switch {
	case p.action == actionKillSession:
		return o.killHolder(ctx, db, p)
	case p.lock.Preset == dialects.PresetLiquibase:
		lb, err := db.Liquibase(p.table.Name)
		if err != nil {
			return err
		}
		var changed bool
		if p.action == actionForceRelease {
			changed, err = lb.ForceRelease(ctx)
		} else {
			changed, err = lb.Release(ctx, p.owner)
		}
		if err != nil || changed {
			return err
		}
		return o.explainRefusal(ctx, db, p)
	}
	tl, err := db.LeaseLocker(p.table)
	if err != nil {
		return err
	}
	if c, ok := tl.(io.Closer); ok {
		defer c.Close()
	}
	if p.action == actionForceRelease {
		changed, err := tl.Expire(ctx, nameIn(p.lock, o.Name))
		if err != nil || changed {
			return err
		}
		return o.explainRefusal(ctx, db, p)
	}
	token := int64(0)
	if p.lock.HasToken {
		token = p.lock.Token
	}
	lease, err := tl.Handle(nameIn(p.lock, o.Name), p.owner, token, dialects.Options{})
	if err != nil {
		return err
	}
	if err := lease.Release(ctx); err != nil {
		if errors.Is(err, dialects.ErrNotOwner) || errors.Is(err, dialects.ErrLeaseLost) {
			return o.explainRefusal(ctx, db, p)
		}
		return err
	}
	return nil
}

// explainRefusal reads the lock again after a guarded change changed
// nothing and says why (exit 3).
func (o *UnlockOptions) explainRefusal(ctx context.Context, db dialects.LockBreaker, p *unlockPlan) error {
	now, err := readAfter(ctx, db, p)
	if err != nil {
		return err
	}
	if len(now) == 0 || now[0].State != dialects.StateHeld {
		return negativef("lock %q is not held any more: it was released or expired before the change; nothing changed", o.Name)
	}
	e := now[0]
	switch {
	case e.Owner != p.owner:
		return negativef("refused: lock %q changed hands before the change: now held by %q, not %q; nothing changed", o.Name, e.Owner, p.owner)
	case e.HasToken && e.Token != p.lock.Token:
		return negativef("refused: lock %q was acquired again by %q (token %d, read with token %d); nothing changed", o.Name, e.Owner, e.Token, p.lock.Token)
	}
	return negativef("refused: lock %q could not be released; nothing changed", o.Name)
}

// holderID is the session id of h, or "" when the holder is unknown.
func holderID(h *dialects.Holder) string {
	if h == nil {
		return ""
	}
	return h.SessionID
}

// killHolder terminates the session of the plan if it still holds the
// lock, then waits until it no longer does.
func (o *UnlockOptions) killHolder(ctx context.Context, db dialects.LockBreaker, p *unlockPlan) error {
	admin := db.LockAdmin()
	id := p.lock.Holder.SessionID
	current, held, err := lookupSession(ctx, admin, p)
	switch {
	case err != nil:
		return err
	case !held:
		return negativef("lock %s is not held any more; no session was terminated", lockRef(p))
	case holderID(current.Holder) != id:
		return negativef("refused: lock %s is now held by %s, not session %s; no session was terminated", lockRef(p), elide.Whole(describeSession(current.Holder)), id)
	}
	if err := admin.Kill(ctx, id); err != nil {
		return err
	}
	deadline := time.Now().Add(killWaitFor)
	for {
		current, held, err := lookupSession(ctx, admin, p)
		if err != nil {
			return err
		}
		if !held || holderID(current.Holder) != id {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("session %s was terminated but still held lock %s after %s", id, lockRef(p), killWaitFor)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// readAfter reads the lock of the plan again: its table row, or the
// session holding it now (none when free).
func readAfter(ctx context.Context, db dialects.LockBreaker, p *unlockPlan) ([]dialects.LockEntry, error) {
	if p.action == actionKillSession {
		e, held, err := lookupSession(ctx, db.LockAdmin(), p)
		if err != nil || !held {
			return nil, err
		}
		return []dialects.LockEntry{e}, nil
	}
	found, err := db.FindLock(ctx, p.lock.Name, []dialects.Table{p.table})
	if err != nil {
		return nil, err
	}
	for _, e := range found.Locks {
		if e.Strategy == dialects.StrategyTable && e.Source == p.table.Name {
			return []dialects.LockEntry{e}, nil
		}
	}
	return nil, nil
}

// unlockView is `unlock -o json`: the action, whether it was a dry run and
// changed anything, the lock before and after (null: no lock).
type unlockView struct {
	Action  string    `json:"action"`
	DryRun  bool      `json:"dry_run"`
	Changed bool      `json:"changed"`
	Before  lockView  `json:"before"`
	After   *lockView `json:"after"`
}

// report writes the outcome (or, for --dry-run, the plan) to stdout.
func (o *UnlockOptions) report(p *unlockPlan, after []dialects.LockEntry, changed bool) error {
	var buf bytes.Buffer
	switch o.Global.Format {
	case output.JSON, output.YAML:
		v := unlockView{Action: string(p.action), DryRun: o.DryRun, Changed: changed, Before: lockJSON(dialects.ApplyNamespace([]dialects.LockEntry{p.lock}, "")[0])}
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
		o.reportText(&buf, p, after, changed)
	}
	_, err := io.WriteString(o.IO.Out, o.Factory.Scrubber.String(buf.String()))
	return err
}

func (o *UnlockOptions) reportText(w io.Writer, p *unlockPlan, after []dialects.LockEntry, changed bool) {
	if !changed {
		describePlan(w, p)
		fmt.Fprintln(w, "Nothing changed (--dry-run).")
		return
	}
	e := p.lock
	switch p.action {
	case actionKillSession:
		fmt.Fprintf(w, "Terminated %s.\n", describeSession(e.Holder))
		if len(after) == 0 {
			fmt.Fprintf(w, "Lock %s is free.\n", lockLabel(e))
		} else {
			fmt.Fprintf(w, "Lock %s is now held by %s (it was waiting).\n", lockLabel(e), describeSession(after[0].Holder))
		}
	default:
		fmt.Fprintf(w, "Released lock %s in table %s.\n", lockLabel(e), e.Source)
		fmt.Fprintf(w, "  before: %s\n", describeRow(e))
		switch {
		case len(after) > 0:
			fmt.Fprintf(w, "  after:  %s\n", describeRow(after[0]))
		case p.deletesRow:
			fmt.Fprintf(w, "  after:  no row (deleted)\n")
		}
	}
}

// sessionIDOf is h's session id, or "?" when the server did not say.
func sessionIDOf(h *dialects.Holder) string {
	if h == nil || h.SessionID == "" {
		return "?"
	}
	return h.SessionID
}

// oneSession reports whether every lock of held is held by one session,
// which terminating it frees at once.
func oneSession(held []dialects.LockEntry) bool {
	for _, e := range held[1:] {
		if sessionIDOf(e.Holder) != sessionIDOf(held[0].Holder) || sessionIDOf(e.Holder) == "?" {
			return false
		}
	}
	return true
}
