package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/dsn"
	"github.com/schedlock/schedlock/internal/iostreams"
	"github.com/schedlock/schedlock/internal/output"
)

// LocksOptions are the inputs of `schedlock locks ls`.
type LocksOptions struct {
	IO      *iostreams.IOStreams
	Factory *Factory
	Global  *GlobalOptions
	Command string // command path, for usage errors

	Table    string
	Preset   string
	Names    []string
	States   []string
	All      bool
	Strategy string
	Watch    time.Duration
	// Key is --key: only the session lock with this key, as the server
	// stores it (see keyedLister).
	Key string
	// SessionNames are --session-names and --session-key: how a --name
	// is looked up and session locks are named.
	SessionNames sessionNameFlags
}

// minWatch is the shortest --watch interval.
const minWatch = 100 * time.Millisecond

// NewCmdLocks builds `schedlock locks` and its `ls` subcommand. runF
// replaces the run function of `ls` in tests.
func NewCmdLocks(f *Factory, g *GlobalOptions, runF func(context.Context, *LocksOptions) error) *cobra.Command {
	locks := &cobra.Command{
		Use:   "locks",
		Short: "Inspect the locks a database holds",
		Example: `  schedlock locks ls --dsn 'postgres://ops@db1:5432/jobs'
  schedlock locks ls --preset shedlock --state expired`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return &UsageError{Err: errors.New("missing subcommand: use 'schedlock locks ls'"), Command: c.CommandPath()}
		},
	}
	locks.AddCommand(newCmdLocksList(f, g, runF), newCmdLocksHistory(f, g, nil))
	return locks
}

func newCmdLocksList(f *Factory, g *GlobalOptions, runF func(context.Context, *LocksOptions) error) *cobra.Command {
	opts := &LocksOptions{IO: f.IO, Factory: f, Global: g}
	c := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List held, waiting and expired locks with their holders",
		Long: `ls lists the locks of a database from two places:

  - lock tables: --table/--preset, or, when none is given, every known table
    that exists (schedlock, shedlock, sys_sched_lock and Liquibase's
    DATABASECHANGELOGLOCK, shown as the lock "liquibase");
  - the server's session locks: PostgreSQL advisory locks (pg_locks with
    pg_stat_activity: key, backend pid, user, client, application, session
    start) and MySQL/MariaDB GET_LOCK locks (performance_schema, or MariaDB's
    metadata_lock_info plugin). When the server cannot list them, a note on
    stderr says how to enable it, and --name with an exact lock name still
    finds the holder (IS_USED_LOCK).

States: held (lease valid, or session lock granted), waiting (a session is
queued), expired (the lease ended while the row still names its owner: a
crashed holder, or a released lock — lock tables keep the owner on release,
so the two look alike), stale (reserved: no backend reports it yet) and free
(no owner; shown only with --all or --state free).

PostgreSQL advisory locks are numeric keys; a key is shown with its name
when the name is known: from an exact --name, or from a lock table row of
that name (the key of a name is schedlock's SHA-256 mapping).

A session that keeps a lock table from others (a lock on the table, an open
transaction on one of its rows) is named on stderr with the statement that
ends it; while the table stays locked, the server's session locks are listed
alone (docs/locks.md, Blocking sessions).

Times are UTC on the database clock. The exit code is 0 whenever the listing
ran, even when it is empty.`,
		Example: `  # Everything held or expired, tables found automatically
  schedlock locks ls --dsn 'postgres://ops@db1:5432/jobs'

  # Only ShedLock's table, zombies only, as JSON
  schedlock locks ls --preset shedlock --state expired -o json

  # Who holds the GET_LOCK "nightly-report"? (works without performance_schema)
  schedlock locks ls --dsn 'mysql://ops@db2:3306/jobs' --name nightly-report

  # Every lock whose name starts with report-, refreshed every 2 seconds
  schedlock locks ls --name 'report-*' --watch 2s

  # The locks on a Redis (found by SCAN, never KEYS) or a ZooKeeper ensemble
  schedlock locks ls --dsn 'redis://redis1:6379/0'
  schedlock locks ls --dsn 'zk://zk1:2181,zk2:2181,zk3:2181/jobs'

  # Every Lease of a Kubernetes cluster, controllers' leader elections included
  schedlock locks ls --dsn 'k8s://*'

  # Liquibase's lock, including when it is free
  schedlock locks ls --preset liquibase --all

  # Only the server's session locks (advisory locks, GET_LOCK)
  schedlock locks ls --strategy session`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			opts.Command = c.CommandPath()
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return locksRun(c.Context(), opts)
		},
	}
	fl := c.Flags()
	fl.StringVar(&opts.Table, "table", "", "lock table to read, optionally schema.table (default: every known table that exists)")
	_ = c.RegisterFlagCompletionFunc("table", lockTableCompletion(f, g, ""))
	fl.StringVar(&opts.Preset, "preset", "", "table layout: "+strings.Join(dialects.AdminPresets(), ", ")+" (default: from the table name or its columns)")
	fl.StringArrayVar(&opts.Names, "name", nil, "show only locks whose name matches this glob (*, ?, [...]; repeatable)")
	_ = c.RegisterFlagCompletionFunc("name", lockNameCompletion(f, g, false, ""))
	states := lockStateNames()
	fl.StringSliceVar(&opts.States, "state", nil, "show only these states: "+strings.Join(states, ", ")+" (comma-separated or repeated)")
	fl.BoolVar(&opts.All, "all", false, "include free locks")
	fl.StringVar(&opts.Strategy, "strategy", "", "only table locks (table) or only session locks (session) (default: both)")
	durationVar(fl, &opts.Watch, "watch", 0, "list again every interval, e.g. 2s, until Ctrl-C (0: once)")
	fl.StringVar(&opts.Key, "key", "", "only the session lock with this key, as the server stores it: a PostgreSQL advisory key (a bigint, or k1,k2) or a GET_LOCK name")
	addSessionNameFlags(c, &opts.SessionNames)
	_ = c.RegisterFlagCompletionFunc("preset", locksCompletion(dialects.AdminPresets()))
	_ = c.RegisterFlagCompletionFunc("state", locksCompletion(states))
	_ = c.RegisterFlagCompletionFunc("strategy", locksCompletion([]string{string(dialects.StrategyTable), string(dialects.StrategySession), dialects.StrategyLeaseAlias}))
	return c
}

// locksCompletion completes a flag with a fixed list of values, comma
// lists included (valuesCompletion).
func locksCompletion(values []string) cobra.CompletionFunc { return valuesCompletion(values) }

// locksQuery is `locks ls` after validation.
type locksQuery struct {
	target *dsn.DSN
	list   dialects.ListOptions
	// namespace keeps only that namespace's locks; "": every lock.
	namespace string
}

// namespaced fills the entries' namespaces and keeps q's namespace only.
func (q *locksQuery) namespaced(listing *dialects.Listing) *dialects.Listing {
	listing.Locks = dialects.ApplyNamespace(listing.Locks, q.namespace)
	return listing
}

// plan validates the flags and x- options; every error is a usage error.
func (o *LocksOptions) plan() (*locksQuery, error) {
	if err := o.validateKey(); err != nil {
		return nil, err
	}
	target, err := resolveAdminDSN(o.Factory, o.Global, o.Command)
	if err != nil {
		return nil, err
	}
	q := &locksQuery{target: target}
	tables, err := adminTables(o.Table, o.Preset, target, o.Command)
	if err != nil {
		return nil, err
	}
	if q.namespace, err = o.Global.namespace(o.Command, target); err != nil {
		return nil, err
	}
	// On ShedLock's Redis layout the namespace is the environment: its
	// table is listed whole, every lock of it in the namespace.
	tables, nameNS, err := adminNamespace(o.Command, target, tables, q.namespace)
	if err != nil {
		return nil, err
	}
	zone, err := o.Global.tableTimeZone(o.Command, target)
	if err != nil {
		return nil, err
	}
	q.list.Tables = zonedTables(tables, zone)
	for _, p := range o.Names {
		if _, err := path.Match(p, ""); err != nil || p == "" {
			return nil, usageErrorf(o.Command, "bad --name pattern %q: use a lock name or a glob such as 'report-*'", p)
		}
	}
	if err := o.SessionNames.apply(target, q.namespace, o.Command); err != nil {
		return nil, err
	}
	q.list.Names = dialects.NamespacePatterns(nameNS, o.Names)
	for _, s := range o.States {
		st, err := dialects.ParseLockState(s)
		if err != nil {
			return nil, &UsageError{Err: err, Command: o.Command}
		}
		q.list.States = append(q.list.States, st)
	}
	q.list.All = o.All
	if o.Strategy != "" {
		st, err := dialects.ParseStrategy(o.Strategy)
		if err != nil {
			return nil, &UsageError{Err: err, Command: o.Command}
		}
		q.list.Strategy = st
	}
	switch {
	case o.Watch < 0:
		return nil, usageErrorf(o.Command, "--watch must not be negative, got %s", o.Watch)
	case o.Watch > 0 && o.Watch < minWatch:
		return nil, usageErrorf(o.Command, "--watch must be at least %s, got %s", minWatch, o.Watch)
	}
	return q, nil
}

// resolveAdminDSN parses the DSN of an administrative command; there is no
// default database.
func resolveAdminDSN(f *Factory, g *GlobalOptions, command string) (*dsn.DSN, error) {
	d, _, err := resolveTarget(f, g, command, nil)
	if err != nil {
		return nil, err
	}
	nameConnections(d, command)
	return d, nil
}

// adminTables turns --table/--preset (else the DSN's x-table/x-preset)
// into the tables to read; nil means "find the known ones".
func adminTables(table, preset string, target *dsn.DSN, command string) ([]dialects.Table, error) {
	t := dialects.Table{Preset: firstNonEmpty(preset, target.Options[dsn.OptPreset]), Name: firstNonEmpty(table, target.Options[dsn.OptTable])}
	if t == (dialects.Table{}) {
		return nil, nil
	}
	if _, err := dialects.ResolveAdminTable(t); err != nil {
		return nil, &UsageError{Err: err, Command: command}
	}
	return []dialects.Table{t}, nil
}

// adminError turns a dialects error of a listing or unlock into the
// command's error: bad tables and shapes, and a table layout the backend
// does not have (the shedlock preset on ZooKeeper), are usage errors.
func adminError(err error, target *dsn.DSN, command string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, dialects.ErrInvalid), errors.Is(err, dialects.ErrNoTable), errors.Is(err, dialects.ErrUnsupported):
		return &UsageError{Err: target.Scrub(err), Command: command}
	}
	return target.Scrub(err)
}

func locksRun(ctx context.Context, o *LocksOptions) error {
	q, err := o.plan()
	if err != nil {
		return err
	}
	db, err := connectAdmin(ctx, q.target, o.Command)
	if err != nil {
		return err
	}
	defer db.Close()
	if o.Global.Verbose {
		fmt.Fprintf(o.IO.ErrOut, "schedlock: listing locks of %s on %s\n", q.target.Redacted(), o.Factory.Scrubber.String(output.DescribeDatabase(db.Detected())))
	}
	if err := checkSessionNamesConnected(db, q.target, o.Command); err != nil {
		return err
	}
	lister, err := lockLister(db)
	if err != nil {
		return adminError(err, q.target, o.Command)
	}
	if o.Key != "" {
		if lister, err = newKeyedLister(db, o.Key); err != nil {
			return adminError(err, q.target, o.Command)
		}
	}
	lister = withLastRuns(lister, db)
	if o.Watch == 0 {
		listing, err := listNamingBlockers(ctx, db, lister, q.list)
		if err != nil {
			return adminError(err, q.target, o.Command)
		}
		return o.render(q.namespaced(listing), "")
	}
	return o.watch(ctx, db, lister, q)
}

// watch lists every o.Watch until ctx ends (Ctrl-C or --timeout), which is
// a normal end: it returns nil.
func (o *LocksOptions) watch(ctx context.Context, backend dialects.Backend, db dialects.LockLister, q *locksQuery) error {
	tty := o.IO.IsStdoutTTY()
	for {
		listing, err := listNamingBlockers(ctx, backend, db, q.list)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return adminError(err, q.target, o.Command)
		}
		header := ""
		if tty && o.Global.Format == output.Table {
			header = fmt.Sprintf("\x1b[H\x1b[2JEvery %s: schedlock locks ls    %s\n\n", o.Watch, time.Now().UTC().Format(time.RFC3339))
		}
		if err := o.render(q.namespaced(listing), header); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(o.Watch):
		}
	}
}

// render writes the listing to stdout and its notes to stderr.
func (o *LocksOptions) render(listing *dialects.Listing, header string) error {
	var buf bytes.Buffer
	buf.WriteString(header)
	if o.Watch > 0 && o.Global.Format != output.Table {
		// One document per refresh: a JSON Lines record, a YAML document.
		if err := writeLocksRecord(&buf, listing.Locks, o.Global.Format); err != nil {
			return err
		}
	} else if err := writeLocks(&buf, listing.Locks, o.Global.Format, o.IO.IsStdoutTTY(), o.IO.ColorEnabled(), o.IO.TerminalWidth()); err != nil {
		return err
	}
	if _, err := io.WriteString(o.IO.Out, o.Factory.Scrubber.String(buf.String())); err != nil {
		return err
	}
	if !o.Global.Quiet {
		for _, n := range append(staleNotes(listing.Locks), listing.Notes...) {
			prefix := "schedlock: note: "
			if w, ok := strings.CutPrefix(n, warningNote); ok {
				prefix, n = "schedlock: warning: ", w
			}
			fmt.Fprintln(o.IO.ErrOut, o.Factory.Scrubber.String(prefix+cliText(n)))
		}
	}
	return nil
}

// writeLocksRecord renders one refresh of `locks ls --watch`: in JSON one
// line holding the array (JSON Lines), in YAML a document opened by "---".
func writeLocksRecord(w io.Writer, locks []dialects.LockEntry, f output.Format) error {
	if f == output.YAML {
		if _, err := io.WriteString(w, "---\n"); err != nil {
			return err
		}
		return output.WriteYAML(w, locksJSON(locks))
	}
	return output.WriteJSONLine(w, locksJSON(locks))
}

// writeLocks renders locks: JSON or YAML (an array, [] when empty), a boxed
// table on a terminal fitted into width columns (0: no limit), or
// tab-separated lines with every field when piped.
func writeLocks(w io.Writer, locks []dialects.LockEntry, f output.Format, tty, color bool, width int) error {
	switch f {
	case output.JSON:
		return output.WriteJSON(w, locksJSON(locks))
	case output.YAML:
		return output.WriteYAML(w, locksJSON(locks))
	}
	if !tty {
		tsv := locksTSV(locks)
		lastRunTSV(&tsv, locks)
		staleTSV(&tsv, locks)
		return output.WriteTable(w, tsv, false)
	}
	if len(locks) == 0 {
		_, err := io.WriteString(w, "No locks found (free locks are shown with --all).\n")
		return err
	}
	t := locksTTY(locks, color)
	addLastRunColumn(&t, locks)
	t.Width = width
	return output.WriteTable(w, t, true)
}

// lockView is one lock in `locks ls -o json`. The field names are a stable
// interface; absent values are null, times RFC 3339 in UTC with
// milliseconds (output.Time).
type lockView struct {
	Name       *string    `json:"name"`
	Namespace  *string    `json:"namespace"`
	Key        *string    `json:"key"`
	Tool       *string    `json:"tool"`
	State      string     `json:"state"`
	Owner      *string    `json:"owner"`
	Token      *int64     `json:"token"`
	Holder     holderView `json:"holder"`
	LockedAt   *string    `json:"locked_at"`
	LockUntil  *string    `json:"lock_until"`
	AgeSeconds *float64   `json:"age_seconds"`
	Strategy   string     `json:"strategy"`
	Preset     *string    `json:"preset"`
	Source     string     `json:"source"`
	// LastRun is the newest recorded run (native lock table with a run
	// table); null when none.
	LastRun *runView `json:"last_run"`
	// StaleReason says why a stale lock is stale; null otherwise.
	StaleReason *string `json:"stale_reason"`
	// LastRefresh and RefreshEverySeconds are the holder's last refresh
	// and its promised interval, for a live lease whose owner declares a
	// heartbeat; null otherwise.
	LastRefresh         *string  `json:"last_refresh"`
	RefreshEverySeconds *float64 `json:"refresh_every_seconds"`
	// Schedule … Missed judge the schedule the newest run was given
	// (run --schedule); null (missed: false) without one. LastSuccess is
	// the newest recorded run that exited 0.
	Schedule                *string  `json:"schedule"`
	ScheduleIntervalSeconds *float64 `json:"schedule_interval_seconds"`
	LastSuccess             *runView `json:"last_success"`
	SuccessDue              *string  `json:"success_due"`
	Missed                  bool     `json:"missed"`
}

// holderView is the session behind a session lock; every field is null for
// table locks.
type holderView struct {
	SessionID   *string `json:"session_id"`
	User        *string `json:"user"`
	Client      *string `json:"client"`
	Application *string `json:"application"`
	Since       *string `json:"since"`
}

func locksJSON(locks []dialects.LockEntry) []lockView {
	out := make([]lockView, 0, len(locks))
	for _, e := range locks {
		out = append(out, lockJSON(e))
	}
	return out
}

func lockJSON(e dialects.LockEntry) lockView {
	j := lockView{
		Name: optString(e.Name), Namespace: optString(e.Namespace), Key: optString(e.Key), Tool: optString(e.Tool), State: string(e.State), Owner: optString(e.Owner),
		LockedAt: optTime(e.LockedAt), LockUntil: optUntil(e.Until),
		Strategy: string(e.Strategy), Preset: optString(e.Preset), Source: e.Source,
		LastRun:     lastRunJSON(e),
		StaleReason: optString(e.StaleReason), LastRefresh: optTime(e.LastRefresh),
	}
	if e.RefreshEvery > 0 {
		secs := e.RefreshEvery.Seconds()
		j.RefreshEverySeconds = &secs
	}
	j.Schedule, j.SuccessDue, j.Missed = optString(e.Schedule), optTime(e.SuccessDue), e.Missed
	if e.ScheduleInterval > 0 {
		secs := e.ScheduleInterval.Seconds()
		j.ScheduleIntervalSeconds = &secs
	}
	if e.LastSuccess != nil {
		v := runJSON(e.Name, *e.LastSuccess)
		j.LastSuccess = &v
	}
	if e.HasToken {
		tok := e.Token
		j.Token = &tok
	}
	if age := e.Age(); age > 0 {
		secs := float64(age.Milliseconds()) / 1000
		j.AgeSeconds = &secs
	}
	if h := e.Holder; h != nil {
		j.Holder = holderView{
			SessionID: optString(h.SessionID), User: optString(h.User), Client: optString(h.Client),
			Application: optString(h.Application), Since: optTime(h.Since),
		}
	}
	return j
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// optUntil is a lease end for JSON: null when there is none — Liquibase's
// lock, and a lock held for good (a store's key without an expiry), whose
// dialects.HeldForGood is no time to show.
func optUntil(t time.Time) *string {
	if t.Equal(dialects.HeldForGood) {
		return nil
	}
	return optTime(t)
}

func optTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := output.Time(t)
	return &s
}

// locksTSV has one column per JSON field, holder fields flattened;
// namespace and tool, the newest, are last so that the earlier ones keep
// their places.
func locksTSV(locks []dialects.LockEntry) output.TableData {
	t := output.TableData{Header: []string{"name", "key", "state", "owner", "token", "session_id", "user", "client", "application", "since", "locked_at", "lock_until", "age_seconds", "strategy", "preset", "source", "namespace", "tool"}}
	for _, e := range locks {
		j := lockJSON(e)
		age := ""
		if j.AgeSeconds != nil {
			age = strconv.FormatFloat(*j.AgeSeconds, 'f', 3, 64)
		}
		token := ""
		if j.Token != nil {
			token = strconv.FormatInt(*j.Token, 10)
		}
		t.Rows = append(t.Rows, []string{
			str(j.Name), str(j.Key), j.State, str(j.Owner), token,
			str(j.Holder.SessionID), str(j.Holder.User), str(j.Holder.Client), str(j.Holder.Application), str(j.Holder.Since),
			str(j.LockedAt), str(j.LockUntil), age, j.Strategy, str(j.Preset), j.Source, str(j.Namespace), str(j.Tool),
		})
	}
	return t
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// locksTTY is the table for people: the key column only when some lock
// has a key, the tool column only when some lock is a migration tool's, owner and holder in one column, times of today as clock times
// (UTC), lease ends relative to the database's now. On a narrow terminal
// the age goes first, then the lock time, the key (kept while a lock has
// no name) and the source; the owner wraps.
func locksTTY(locks []dialects.LockEntry, color bool) output.TableData {
	withKey, keyOnly, withNamespace, withTool := false, false, false, false
	for _, e := range locks {
		withKey = withKey || e.Key != ""
		keyOnly = keyOnly || (e.Key != "" && e.Name == "")
		withNamespace = withNamespace || e.Namespace != ""
		withTool = withTool || e.Tool != ""
	}
	// A key is copied whole into `unlock --key`; a lock without a name is
	// known only by its key, so then the column stays however narrow the
	// terminal.
	t := output.TableData{Header: []string{"NAME"}, Drop: []string{"AGE", "LOCKED AT (UTC)", "KEY", "SOURCE"}, Whole: []string{"KEY"}}
	if keyOnly {
		t.Drop = []string{"AGE", "LOCKED AT (UTC)", "SOURCE"}
	}
	if withNamespace {
		t.Header = append(t.Header, "NAMESPACE")
	}
	if withKey {
		t.Header = append(t.Header, "KEY")
	}
	if withTool {
		t.Header = append(t.Header, "TOOL")
	}
	t.Header = append(t.Header, "STATE", "OWNER / HOLDER", "LOCKED AT (UTC)", "UNTIL (UTC)", "AGE", "SOURCE")
	for _, e := range locks {
		row := []string{dash(e.Name)}
		if withNamespace {
			row = append(row, dash(e.Namespace))
		}
		if withKey {
			row = append(row, dash(e.Key))
		}
		if withTool {
			row = append(row, dash(e.Tool))
		}
		row = append(row, stateCell(e.State, color), ownerCell(e), dash(clockTime(e.LockedAt, e.DBNow)), untilCell(e, true), dash(humanDuration(e.Age())), e.Source)
		t.Rows = append(t.Rows, row)
	}
	return t
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// stateColours are the colours of the states on a terminal.
var stateColours = map[dialects.LockState]*output.Colour{
	dialects.StateHeld:    output.Green,
	dialects.StateWaiting: output.Yellow,
	dialects.StateExpired: output.Red,
	dialects.StateStale:   output.Red,
}

func stateCell(s dialects.LockState, on bool) string {
	return output.PaintWord(on, stateColours, s)
}

// ownerCell is the table owner, or the session: "session 4242:
// app@10.0.0.7, psql, since 09:58:30".
func ownerCell(e dialects.LockEntry) string {
	if e.Holder == nil {
		return dash(e.Owner)
	}
	return sessionText(e.Holder, clockTime(e.Holder.Since, e.DBNow))
}

// describeSession says who a session is: "session 4242: postgres@10.0.0.7,
// psql, since 2024-05-01T10:00:00Z".
func describeSession(h *dialects.Holder) string {
	if h == nil || h.SessionID == "" {
		return "a session this user cannot identify (no access to the server's lock views)"
	}
	return sessionText(h, shortTime(h.Since))
}

func sessionText(h *dialects.Holder, since string) string {
	s := "session " + h.SessionID
	var who []string
	switch {
	case h.User != "" && h.Client != "":
		who = append(who, h.User+"@"+h.Client)
	case h.User != "":
		who = append(who, h.User)
	case h.Client != "":
		who = append(who, h.Client)
	}
	if h.Application != "" {
		who = append(who, h.Application)
	}
	if since != "" {
		who = append(who, "since "+since)
	}
	if len(who) > 0 {
		s += ": " + strings.Join(who, ", ")
	}
	return s
}

// shortTime is t in RFC 3339 UTC to the second; "" for the zero time.
func shortTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// clockTime is t as a UTC clock time when it falls on the day of now, else
// with its date: "09:58:30", "2024-04-30 23:10".
func clockTime(t, now time.Time) string {
	switch {
	case t.IsZero():
		return ""
	case !now.IsZero() && t.UTC().Format(time.DateOnly) == now.UTC().Format(time.DateOnly):
		return t.UTC().Format(time.TimeOnly)
	}
	return t.UTC().Format("2006-01-02 15:04")
}

// untilCell is the lease end, as a clock time (clockTime) or in RFC 3339,
// with how far it is from the database's now: "10:30:00 (in 4m30s)",
// "… (2m ago)".
func untilCell(e dialects.LockEntry, clock bool) string {
	switch {
	case e.Until.IsZero():
		return "-"
	case e.Until.Equal(dialects.HeldForGood):
		return "never (no expiry)"
	}
	s := shortTime(e.Until)
	if clock {
		s = clockTime(e.Until, e.DBNow)
	}
	if e.DBNow.IsZero() {
		return s
	}
	switch d := e.Until.Sub(e.DBNow); {
	case d >= time.Millisecond:
		return s + " (in " + humanDuration(d) + ")"
	case d <= -time.Millisecond:
		return s + " (" + humanDuration(-d) + " ago)"
	}
	return s + " (now)"
}

// humanDuration rounds d to the second (to the millisecond below one) and
// drops zero units: "2h", "1h5m", "5m30s", "42s", "350ms"; "" for 0.
func humanDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return ""
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	}
	d = d.Round(time.Second)
	h, m, sec := int(d/time.Hour), int(d%time.Hour/time.Minute), int(d%time.Minute/time.Second)
	var b strings.Builder
	if h > 0 {
		fmt.Fprintf(&b, "%dh", h)
	}
	if m > 0 {
		fmt.Fprintf(&b, "%dm", m)
	}
	if sec > 0 {
		fmt.Fprintf(&b, "%ds", sec)
	}
	return b.String()
}
