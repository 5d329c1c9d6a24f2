package dialects

import (
	"context"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/schedlock/schedlock/internal/elide"
)

// Preset names a lock-table layout.
const (
	// PresetSchedlock is the native table: ShedLock's columns plus a
	// fencing token.
	PresetSchedlock = "schedlock"
	// PresetShedlock is ShedLock's table (name, lock_until, locked_at,
	// locked_by), written in UTC as ShedLock's usingDbTime() does, or in
	// a writer time zone (Table.TimeZone) as a JVM without it does.
	PresetShedlock = "shedlock"
	// PresetSysSchedLock is the common home-grown sys_sched_lock table
	// (lock_name, lock_owner, acquire_time, expire_time).
	PresetSysSchedLock = "sys_sched_lock"
)

// Schema is a lock table's name and column names. TokenCol is empty when
// the table has no fencing-token column.
type Schema struct {
	Preset      string
	Table       string
	NameCol     string
	OwnerCol    string
	LockedAtCol string
	UntilCol    string
	TokenCol    string
	// TimeZone is the writer time zone of lock_until and locked_at (see
	// LoadTimeZone), "" for UTC; Zone is its frame when the schema was
	// resolved, which lease-table SQL renders (see ZoneFrame).
	TimeZone string
	Zone     ZoneFrame
	// UntilWholeSeconds is set when the catalog reports that the lease-end
	// column keeps whole seconds only (MySQL DATETIME(0)): the statements
	// that write it round the lease end up to the next whole second, so
	// the column's truncation never shortens a lease or an at-least.
	UntilWholeSeconds bool
}

var presets = map[string]Schema{
	PresetSchedlock:    {Preset: PresetSchedlock, Table: "schedlock", NameCol: "name", OwnerCol: "locked_by", LockedAtCol: "locked_at", UntilCol: "lock_until", TokenCol: "token"},
	PresetShedlock:     {Preset: PresetShedlock, Table: "shedlock", NameCol: "name", OwnerCol: "locked_by", LockedAtCol: "locked_at", UntilCol: "lock_until"},
	PresetSysSchedLock: {Preset: PresetSysSchedLock, Table: "sys_sched_lock", NameCol: "lock_name", OwnerCol: "lock_owner", LockedAtCol: "acquire_time", UntilCol: "expire_time"},
}

// Presets lists the preset names, sorted.
func Presets() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Table selects the lock table: a preset layout and, optionally, another
// table name for it. The zero value is the native "schedlock" table.
type Table struct {
	Preset string // default PresetSchedlock
	Name   string // default the preset's table name; may be schema-qualified
	// TimeZone is the zone whose wall-clock time the table's zone-less
	// times are written in (a JVM's for ShedLock without usingDbTime()):
	// an IANA name, UTC or Local; default UTC. See LoadTimeZone.
	TimeZone string
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]{0,62}(\.[A-Za-z_][A-Za-z0-9_$]{0,62})?$`)

// Schema resolves t to its layout. Unknown presets and table names that are
// not plain (optionally schema-qualified) identifiers give ErrInvalid: table
// names are spliced into SQL, so only identifiers are accepted.
func (t Table) Schema() (Schema, error) {
	preset := t.Preset
	if preset == "" {
		preset = PresetSchedlock
	}
	s, ok := presets[preset]
	if !ok {
		return Schema{}, invalidf("unknown preset %q: use one of %s", preset, elide.Whole(strings.Join(Presets(), ", ")))
	}
	if t.Name != "" {
		if !identRE.MatchString(t.Name) {
			return Schema{}, invalidf("table name %q is not a plain identifier (letters, digits, _ and $, optionally schema.table)", t.Name)
		}
		s.Table = t.Name
	}
	if err := s.setTimeZone(t.TimeZone); err != nil {
		return Schema{}, err
	}
	return s, nil
}

// LeaseLocker is the lease strategy ("table", also called "lease") on any
// backend: a Locker whose leases an administrator can read, rebuild and
// end. Every backend's lease locker implements it; a SQL table's adds
// TableLocker.
type LeaseLocker interface {
	Locker
	// Schema is the layout in use: the preset and its names (a table's
	// columns, a store's key form).
	Schema() Schema
	// Inspect reads the lease of name; found is false when there is none.
	Inspect(ctx context.Context, name string) (row Row, found bool, err error)
	// Handle rebuilds the lease of a lock that owner holds (for example one
	// taken by another process), so it can be refreshed or released under
	// the owner check. token 0 skips the token comparison. opts supplies
	// AtMost and AtLeast for Refresh and Release.
	Handle(name, owner string, token int64, opts Options) (Lease, error)
	// Expire ends any owner's lease of name (administrative force-unlock)
	// and reports whether there was a live lease to end.
	Expire(ctx context.Context, name string) (bool, error)
}

// TableCreator is implemented by lease lockers whose container must exist
// before the first lock and that create it on request: a SQL table, a
// ZooKeeper root node, a table of the memory store. Lockers never create
// it on their own; a missing one is a *MissingTableError.
type TableCreator interface {
	// CreateTable creates the container when it does not exist.
	CreateTable(ctx context.Context) error
}

// TableLocker is a lease locker on a SQL table.
type TableLocker interface {
	LeaseLocker
	TableCreator
	// CreateSQL is the CREATE TABLE statement for this database.
	CreateSQL() string
}

// Row is one lock-table row, its times in UTC on the database clock.
type Row struct {
	Name     string    `json:"name"`
	Owner    string    `json:"owner"`
	Token    int64     `json:"token"`
	HasToken bool      `json:"-"`
	LockedAt time.Time `json:"locked_at"`
	Until    time.Time `json:"lock_until"`
	// DBNow is the database's clock when the row was read.
	DBNow time.Time `json:"db_now"`
	// HostTimes is true where the store has no clock to read (etcd): then
	// LockedAt is the acquiring host's time just before its request (the
	// lock was granted later, by an unknown delay), Until that host's
	// estimate, and DBNow this host's time.
	HostTimes bool `json:"-"`
}

// Expired reports whether the lease had run out when the row was read.
func (r Row) Expired() bool { return !r.Until.After(r.DBNow) }
