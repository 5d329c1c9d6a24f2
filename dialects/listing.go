package dialects

import (
	"context"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/schedlock/schedlock/internal/elide"
)

// Lock administration: what `schedlock locks ls` lists and `schedlock
// unlock` frees. Table locks come from the lock tables (lease-table presets
// and Liquibase's DATABASECHANGELOGLOCK); session locks from the server's
// own views, through the dialect's LockAdmin.

// PresetLiquibase names Liquibase's DATABASECHANGELOGLOCK layout (ID,
// LOCKED, LOCKGRANTED, LOCKEDBY; one row, ID = 1). It has no lease, so it is
// not a lease-table preset: Table.Schema refuses it and no Locker takes
// locks in it. ListLocks and FindLock show its row as the lock
// LiquibaseLockName, held while LOCKED is true.
const PresetLiquibase = "liquibase"

// LiquibaseLockName is the lock name under which Liquibase's lock is listed
// and unlocked.
const LiquibaseLockName = "liquibase"

// LiquibaseTable is Liquibase's default lock table name. Unquoted, it
// resolves to Liquibase's table on every database (PostgreSQL folds it to
// the lower case Liquibase creates there).
const LiquibaseTable = "DATABASECHANGELOGLOCK"

var liquibaseColumns = []string{"ID", "LOCKED", "LOCKGRANTED", "LOCKEDBY"}

// AdminPresets lists the table layouts that lock administration reads, in
// the order a table of unknown layout is matched against them: the
// lease-table presets, then liquibase.
func AdminPresets() []string {
	return []string{PresetSchedlock, PresetShedlock, PresetSysSchedLock, PresetLiquibase}
}

// KnownTables are the tables ListLocks looks for when it is given none:
// each admin preset's default table.
func KnownTables() []Table {
	out := make([]Table, 0, 4)
	for _, p := range AdminPresets() {
		out = append(out, Table{Preset: p, Name: defaultTableName(p)})
	}
	return out
}

func defaultTableName(preset string) string {
	if preset == PresetLiquibase {
		return LiquibaseTable
	}
	return presets[preset].Table
}

// ExpectedColumns returns the columns a table of preset must have, as the
// preset names them (databases compare them without regard to case). An
// unknown preset gives ErrInvalid listing the admin presets.
func ExpectedColumns(preset string) ([]string, error) {
	if preset == PresetLiquibase {
		return append([]string(nil), liquibaseColumns...), nil
	}
	s, ok := presets[preset]
	if !ok {
		return nil, invalidf("unknown preset %q: use one of %s", preset, elide.Whole(strings.Join(AdminPresets(), ", ")))
	}
	cols := []string{s.NameCol, s.UntilCol, s.LockedAtCol, s.OwnerCol}
	if s.TokenCol != "" {
		cols = append(cols, s.TokenCol)
	}
	return cols, nil
}

// ResolveAdminTable completes t for administration: an empty name becomes
// the preset's default table; an empty preset becomes the preset of a known
// table name (schedlock, shedlock, sys_sched_lock, DATABASECHANGELOGLOCK, in
// any case) and stays empty otherwise, for ListLocks to infer from the
// table's columns. An unknown preset or a name that is not a plain
// (optionally schema-qualified) identifier gives ErrInvalid.
func ResolveAdminTable(t Table) (Table, error) {
	if t.Preset != "" {
		if _, err := ExpectedColumns(t.Preset); err != nil {
			return t, err
		}
	}
	if t.Name == "" {
		if t.Preset == "" {
			t.Preset = PresetSchedlock
		}
		t.Name = defaultTableName(t.Preset)
		return t, nil
	}
	if !identRE.MatchString(t.Name) {
		return t, invalidf("table name %q is not a plain identifier (letters, digits, _ and $, optionally schema.table)", t.Name)
	}
	if t.Preset == "" {
		base := t.Name[strings.LastIndexByte(t.Name, '.')+1:]
		for _, k := range KnownTables() {
			if strings.EqualFold(base, k.Name) {
				t.Preset = k.Preset
			}
		}
	}
	return t, nil
}

// LockState is the state of a listed lock (docs/locks.md, States).
type LockState string

// The lock states, in display order.
const (
	// StateHeld: the lease is valid now, or a session lock is granted, or
	// Liquibase's LOCKED is true.
	StateHeld LockState = "held"
	// StateWaiting: a session is queued for a session lock.
	StateWaiting LockState = "waiting"
	// StateExpired: a lease-table row whose lease ran out while it still
	// names an owner: the holder died or hung, or released the lock (the
	// presets cannot tell these apart, see TableRowState).
	StateExpired LockState = "expired"
	// StateStale: within its lease, but its holder is known to be gone:
	// it declared a heartbeat and missed StaleRefreshes of them, or its
	// owner is a process of this host that no longer runs (see
	// StaleReason). Only leases written by schedlock declare a heartbeat.
	StateStale LockState = "stale"
	// StateFree: released, with no owner recorded (a lease-table row with an
	// empty owner, Liquibase's row with LOCKED false).
	StateFree LockState = "free"
	// StatePaused: a lease-table row held by a pause (see PauseOwner): no
	// node runs the job until the pause ends.
	StatePaused LockState = "paused"
)

// LockStates lists every state in display order.
func LockStates() []LockState {
	return []LockState{StateHeld, StatePaused, StateWaiting, StateExpired, StateStale, StateFree}
}

// ParseLockState turns a flag value into a LockState; ErrInvalid lists the
// states.
func ParseLockState(s string) (LockState, error) {
	for _, st := range LockStates() {
		if string(st) == strings.ToLower(strings.TrimSpace(s)) {
			return st, nil
		}
	}
	names := make([]string, 0, 5)
	for _, st := range LockStates() {
		names = append(names, string(st))
	}
	return "", invalidf("unknown lock state %q: use one of %s", s, elide.Whole(strings.Join(names, ", ")))
}

// HeldForGood is the Until of a lock held with no end — a store's key
// without an expiry (written by another tool, or PERSIST): later than any
// lease, so it reads as held; the command line shows it as no lease end.
var HeldForGood = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// TableRowState is the state of a lease-table row: held while its lease
// runs (until after the database's now), stale while it runs but its
// holder is gone (StaleReason), expired once it has run out while the row
// still names an owner, free when it names none. Every preset's release
// only moves the lease end and keeps the owner, so a released row and an
// expired one look alike and both are expired.
func TableRowState(r Row) LockState {
	_, paused := PausedBy(r.Owner)
	switch {
	case r.Until.After(r.DBNow) && paused:
		return StatePaused
	case r.Until.After(r.DBNow) && StaleReason(r) != "":
		return StateStale
	case r.Until.After(r.DBNow):
		return StateHeld
	case r.Owner != "":
		return StateExpired
	default:
		return StateFree
	}
}

// Holder is the server session behind a session lock.
type Holder struct {
	SessionID   string    // backend pid, connection id, …
	User        string    // database user
	Client      string    // client address ("local" for a Unix socket)
	Application string    // application name the client announced
	Since       time.Time // when the session started (UTC); zero when unknown
}

// LockEntry is one listed lock.
type LockEntry struct {
	// Name is the lock name; empty when only a key is known (a PostgreSQL
	// advisory lock whose name was not among the names to label). After
	// ApplyNamespace it is the name within Namespace.
	Name string
	// Namespace is the namespace of the lock (see NamespacedName), filled
	// by ApplyNamespace; empty for a lock taken without one. A backend
	// whose table keeps the namespace itself (PlaceNamespace: ShedLock's
	// Redis environment) fills it, Name then being the name within it.
	Namespace string
	// Key is the raw key where the backend does not lock the name itself: a
	// PostgreSQL bigint advisory key in decimal, "k1,k2" for a two-int4
	// key, or the GET_LOCK name a MySQL lock is taken under ("jobs/nightly",
	// or another tool's name, listed with no Name).
	Key string
	// Tool is the migration tool whose session lock this is, derived for
	// the current database (ToolGolangMigrate, ToolGoose, ToolFlyway,
	// ToolAtlas); empty for every other lock.
	Tool     string
	State    LockState
	Owner    string // lease-table owner, Liquibase's LOCKEDBY
	Token    int64  // fencing token when HasToken
	HasToken bool
	// Holder is the session holding or awaiting a session lock; nil for
	// table locks.
	Holder   *Holder
	LockedAt time.Time // UTC, database clock; zero when unknown
	Until    time.Time // lease end (UTC, database clock); zero when none
	DBNow    time.Time // the database's now when it was read; zero when unknown
	Strategy Strategy  // table or session
	// Source is the table the row came from, or the server view
	// (pg_locks, performance_schema.metadata_locks, …).
	Source string
	// Preset is the table layout of a table lock; empty for session locks.
	Preset string
	// LastRun is the newest run recorded in the run table beside a native
	// lock table (see RunHistory); nil when none is known.
	LastRun *Run
	// LastSuccess is the newest recorded run that exited 0; nil when none
	// is recorded. See SetRuns.
	LastSuccess *Run
	// Schedule is the schedule the newest recorded run was given (run
	// --schedule); empty when none. ScheduleInterval is how often it
	// expects a run around DBNow; SuccessDue when the next successful
	// run was due (the schedule's second time after LastSuccess started);
	// Missed is true when that has passed with no newer success: runs were
	// missed, skipped or failed. Zero without a Schedule.
	Schedule         string
	ScheduleInterval time.Duration
	SuccessDue       time.Time
	Missed           bool
	// StaleReason says why a StateStale lock is stale (see StaleReason);
	// empty in every other state.
	StaleReason string
	// LastRefresh is when the holder last refreshed the lease, and
	// RefreshEvery how often it promised to, where its owner declares a
	// heartbeat (see LastRefresh); zero otherwise.
	LastRefresh  time.Time
	RefreshEvery time.Duration
}

// SetRowState sets e's State, StaleReason, LastRefresh and RefreshEvery
// from lease row r (see TableRowState).
func (e *LockEntry) SetRowState(r Row) {
	e.State = TableRowState(r)
	e.StaleReason = ""
	if e.State == StateStale {
		e.StaleReason = StaleReason(r)
	}
	e.LastRefresh, e.RefreshEvery = time.Time{}, 0
	if at, every, ok := LastRefresh(r); ok && r.Until.After(r.DBNow) {
		e.LastRefresh, e.RefreshEvery = at, every
	}
}

// Age is how long the lock has been taken, on the database clock; 0 when
// unknown.
func (e LockEntry) Age() time.Duration {
	if e.LockedAt.IsZero() || e.DBNow.IsZero() || e.DBNow.Before(e.LockedAt) {
		return 0
	}
	return e.DBNow.Sub(e.LockedAt)
}

// LockAdmin is what a dialect adds for lock administration (see
// sqlkit.AdminEngine on a SQL backend).
type LockAdmin interface {
	// LockTables returns the KnownTables that exist where unqualified table
	// names resolve, with their presets and names as the database spells
	// them.
	LockTables(ctx context.Context) ([]Table, error)
	// SessionLocks lists the granted and awaited session locks that the
	// server's views show. An entry whose key or stored name is that of one
	// of names gets that name. When the server cannot list, the error is a
	// *ListingUnavailableError that says how to enable listing.
	SessionLocks(ctx context.Context, names []string) ([]LockEntry, error)
	// SessionLock returns the session holding the lock called name; found
	// is false when the lock is free. It answers even where SessionLocks
	// cannot (MySQL's IS_USED_LOCK).
	SessionLock(ctx context.Context, name string) (entry LockEntry, found bool, err error)
	// Kill terminates the session whose Holder.SessionID is sessionID,
	// which frees its session locks. Missing rights give a
	// *PrivilegeError with the GRANT.
	Kill(ctx context.Context, sessionID string) error
}

// ListingUnavailableError says the server cannot list its session locks,
// and how to make it. It matches ErrUnsupported.
type ListingUnavailableError struct {
	Reason string // e.g. "performance_schema is OFF"
	Enable string // what to run or set, e.g. "INSTALL SONAME 'metadata_lock_info'"
}

func (e *ListingUnavailableError) Error() string {
	msg := "cannot list session locks: " + e.Reason
	if e.Enable != "" {
		msg += "; to enable: " + e.Enable
	}
	return msg
}

// Is makes errors.Is(err, ErrUnsupported) true.
func (e *ListingUnavailableError) Is(target error) bool { return target == ErrUnsupported }

// ShapeError says a table lacks the columns of its preset. It matches
// ErrInvalid.
type ShapeError struct {
	Table    string
	Preset   string   // empty: the table matched no preset
	Missing  []string // expected columns the table lacks (for Preset)
	Found    []string // the table's columns
	Expected map[string][]string
}

func (e *ShapeError) Error() string {
	found := strings.Join(e.Found, ", ")
	if e.Preset == "" {
		var want []string
		for _, p := range AdminPresets() {
			want = append(want, p+" ("+strings.Join(e.Expected[p], ", ")+")")
		}
		return fmt.Sprintf("table %s matches no lock-table layout: expected the columns of %s; it has %s", e.Table, strings.Join(want, " or "), found)
	}
	return fmt.Sprintf("table %s is not a %s table: expected columns %s; missing %s (it has %s)",
		e.Table, e.Preset, strings.Join(e.Expected[e.Preset], ", "), strings.Join(e.Missing, ", "), found)
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *ShapeError) Is(target error) bool { return target == ErrInvalid }

// CheckColumns returns a *ShapeError when found lacks a column of preset,
// comparing without regard to case, else nil.
func CheckColumns(table, preset string, found []string) error {
	want, err := ExpectedColumns(preset)
	if err != nil {
		return err
	}
	if missing := missingColumns(want, found); len(missing) > 0 {
		return &ShapeError{Table: table, Preset: preset, Missing: missing, Found: found, Expected: map[string][]string{preset: want}}
	}
	return nil
}

// MatchPreset returns the first admin preset (AdminPresets order) whose
// columns found has, or a *ShapeError listing every preset's columns.
func MatchPreset(table string, found []string) (string, error) {
	expected := map[string][]string{}
	for _, p := range AdminPresets() {
		want, _ := ExpectedColumns(p)
		if len(missingColumns(want, found)) == 0 {
			return p, nil
		}
		expected[p] = want
	}
	return "", &ShapeError{Table: table, Found: found, Expected: expected}
}

func missingColumns(want, found []string) []string {
	var missing []string
	for _, w := range want {
		ok := false
		for _, f := range found {
			if strings.EqualFold(w, f) {
				ok = true
				break
			}
		}
		if !ok {
			missing = append(missing, w)
		}
	}
	return missing
}

// KeyDeleter is implemented by backends that free a lock by deleting its
// key — a handle's release, a forced Expire, a resume — where a SQL table
// ends the lease in its row (the stores: Redis, etcd, ZooKeeper). After
// such a change the lock is free: no owner, no lease end (Redis keeps the
// name's token counter). Previews of a change use it.
type KeyDeleter interface {
	ReleaseDeletesKey() bool
}

// ReleaseDeletesKey reports whether b frees locks by deleting their key
// (see KeyDeleter).
func ReleaseDeletesKey(b any) bool {
	k, ok := b.(KeyDeleter)
	return ok && k.ReleaseDeletesKey()
}

// ColumnReader is implemented by table lockers and Liquibase locks that can
// read their table's columns. A missing table gives an error matching
// ErrNoTable.
type ColumnReader interface {
	Columns(ctx context.Context) ([]string, error)
}

// LiquibaseRow is Liquibase's lock row (ID = 1).
type LiquibaseRow struct {
	Locked   bool
	Owner    string    // LOCKEDBY
	LockedAt time.Time // LOCKGRANTED in UTC; zero when NULL
	DBNow    time.Time // the database's now (UTC)
}

// LiquibaseLock administers one Liquibase lock table. Its releases are
// guarded, unlike Liquibase's own release-locks.
type LiquibaseLock interface {
	ColumnReader
	// Table is the table name.
	Table() string
	// Inspect reads the row ID = 1; found is false when there is none.
	Inspect(ctx context.Context) (row LiquibaseRow, found bool, err error)
	// Release clears the lock only while it is locked by owner: LOCKED
	// false, LOCKGRANTED and LOCKEDBY NULL where ID = 1, LOCKED is true and
	// LOCKEDBY = owner. It reports whether it changed the row.
	Release(ctx context.Context, owner string) (bool, error)
	// ForceRelease clears the lock whoever holds it (ID = 1 and LOCKED).
	ForceRelease(ctx context.Context) (bool, error)
}

// LiquibaseOpener is implemented by table lockers whose SQL engine also
// administers Liquibase lock tables on the same database.
type LiquibaseOpener interface {
	Liquibase(table string) (LiquibaseLock, error)
}

// ListOptions select what ListLocks reads and shows.
type ListOptions struct {
	// Tables are the lock tables to read (see ResolveAdminTable); none:
	// the KnownTables that exist, skipping (with a note) any of the wrong
	// shape. One Table with only TimeZone set stands for those known
	// tables, read in that writer time zone (see KnownTablesIn).
	Tables []Table
	// Names are globs (path.Match) on the lock name, or on the key when
	// the name is unknown; none: every lock. Patterns without
	// metacharacters also label PostgreSQL keys and are looked up one by
	// one where the server cannot list its session locks.
	Names []string
	// States keeps only locks in these states; none: every state but free.
	States []LockState
	// All includes free locks when States is empty.
	All bool
	// Strategy keeps only table locks (StrategyTable) or only session locks
	// (StrategySession); empty: both.
	Strategy Strategy
	// Resolved says Tables are the Tables of an earlier Listing: a SQL
	// backend reads them as they are, without looking for tables or
	// checking their columns again, so that a listing repeated every few
	// seconds (the exporter) costs one query per table. A table dropped
	// since fails the listing.
	Resolved bool
}

// Listing is what ListLocks found.
type Listing struct {
	// Locks are sorted by name, then source.
	Locks []LockEntry
	// Tables are the lock tables read, with their presets.
	Tables []Table
	// Notes are things a person should know about the listing: tables
	// skipped, session locks the server cannot list (and how to enable
	// that), states that the table layouts cannot tell apart.
	Notes []string
}

// LiquibaseEntry is the listing of Liquibase's lock row read from table:
// held while LOCKED, free otherwise; it has no lease end.
func LiquibaseEntry(table string, row LiquibaseRow) LockEntry {
	state := StateFree
	if row.Locked {
		state = StateHeld
	}
	return LockEntry{
		Name: LiquibaseLockName, State: state, Owner: row.Owner,
		LockedAt: row.LockedAt, DBNow: row.DBNow,
		Strategy: StrategyTable, Source: table, Preset: PresetLiquibase,
	}
}

// TableEntry is the listing entry of lease-table row r of t.
func TableEntry(t Table, r Row) LockEntry {
	e := LockEntry{
		Name: r.Name, Owner: r.Owner,
		Token: r.Token, HasToken: r.HasToken,
		LockedAt: r.LockedAt, Until: r.Until, DBNow: r.DBNow,
		Strategy: StrategyTable, Source: t.Name, Preset: t.Preset,
	}
	e.SetRowState(r)
	return e
}

// MatchesName reports whether e matches one of the globs (path.Match): its
// name, or its key when the name is unknown. A stored name with a namespace
// ("staging::nightly") matches both as stored and by the name within its
// namespace ("nightly"), the name listings show; so does a lock whose
// Namespace the backend set ("nightly" of namespace "staging"). No
// patterns match everything.
func (e LockEntry) MatchesName(patterns []string) bool {
	if len(patterns) == 0 {
		return true
	}
	subject := e.Name
	if subject == "" {
		subject = e.Key
	}
	subjects := []string{subject}
	if e.Namespace != "" && e.Name != "" {
		subjects = append(subjects, NamespacedName(e.Namespace, e.Name))
	} else if ns, name := SplitNamespace(e.Name); ns != "" {
		subjects = append(subjects, name)
	}
	for _, p := range patterns {
		for _, s := range subjects {
			if ok, _ := path.Match(p, s); ok {
				return true
			}
		}
	}
	return false
}

// CheckNames refuses a Names pattern that path.Match cannot read (an
// unclosed [, a trailing \): one Invalid error naming it.
func (o ListOptions) CheckNames() error {
	for _, p := range o.Names {
		if _, err := path.Match(p, ""); err != nil {
			return invalidf("bad name pattern %q: %v", p, err)
		}
	}
	return nil
}

// Keeps reports whether a listing with o keeps e: of o's strategy (when
// it names one), matching a name glob (MatchesName), in one of o.States
// (none: every state but free, and free too with o.All). A backend that
// lists by reading everything filters with it.
func (o ListOptions) Keeps(e LockEntry) bool {
	if o.Strategy != "" && o.Strategy != e.Strategy {
		return false
	}
	return e.MatchesName(o.Names) && o.keepsState(e.State)
}

// keepsState is Keeps' state filter.
func (o ListOptions) keepsState(s LockState) bool {
	if len(o.States) == 0 {
		return o.All || s != StateFree
	}
	return slices.Contains(o.States, s)
}

// FilterLocks keeps the locks opts names and whose states it lists (the
// strategy was chosen by what was read).
func FilterLocks(locks []LockEntry, opts ListOptions) []LockEntry {
	out := locks[:0]
	for _, e := range locks {
		if e.MatchesName(opts.Names) && opts.keepsState(e.State) {
			out = append(out, e)
		}
	}
	return out
}

// SortLocks sorts locks by state (held first, in LockStates order), then
// by name and source.
func SortLocks(locks []LockEntry) {
	rank := map[LockState]int{}
	for i, s := range LockStates() {
		rank[s] = i
	}
	sort.SliceStable(locks, func(i, j int) bool {
		a, b := locks[i], locks[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if a.Key != b.Key {
			return a.Key < b.Key
		}
		if a.Source != b.Source {
			return a.Source < b.Source
		}
		return rank[a.State] < rank[b.State]
	})
}

// QuoteGlob is name as a ListOptions.Names pattern that matches name
// itself only: its glob characters (* ? [ \) escaped for path.Match. A
// FindLock that selects through ListLocks passes it, so that a lock
// called "report-*" finds that lock and not every report.
func QuoteGlob(name string) string {
	if !strings.ContainsAny(name, `*?[\`) {
		return name
	}
	var sb strings.Builder
	for _, r := range name {
		if strings.ContainsRune(`*?[\`, r) {
			sb.WriteByte('\\')
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

// KeepNamed keeps the locks called name exactly (a FindLock that lists
// every lock of its tables and picks the name's).
func KeepNamed(locks []LockEntry, name string) []LockEntry {
	out := []LockEntry{}
	for _, e := range locks {
		if e.Name == name {
			out = append(out, e)
		}
	}
	return out
}
