// Package claimtable is the engine behind task-row claims: workers take up
// to N due rows of a task table each, every row exactly once across every
// process, under a claim lease (claimed_until) after which the rows of a
// worker that died come back; then complete, fail (with retries and
// back-off) or give back each one. It is parametrised by each dialect's
// SQL vocabulary (a Builder, registered by the dialect package with
// Register), so one engine serves PostgreSQL, MySQL/MariaDB/TiDB, SQLite,
// Oracle, SQL Server and Dameng. Programs use package claim instead.
//
// # Strategies
//
//   - skip-locked: the due rows are locked with SELECT … FOR UPDATE SKIP
//     LOCKED, so concurrent workers pass over each other's rows without
//     waiting. One statement where the database allows (PostgreSQL: a CTE
//     that locks and an UPDATE … RETURNING), else a short transaction
//     (lock, UPDATE by id, commit) — under READ COMMITTED on MySQL and
//     MariaDB, whose REPEATABLE READ gap locks defeat SKIP LOCKED.
//   - readpast: SQL Server's WITH (UPDLOCK, READPAST, ROWLOCK) in one
//     UPDATE … OUTPUT statement; READCOMMITTEDLOCK is added where the
//     database runs READ_COMMITTED_SNAPSHOT, which refuses READPAST.
//   - optimistic: read the due rows without locks, then UPDATE … WHERE
//     id = ? AND version = ? and keep the rows whose version this worker
//     moved on; works everywhere, including SQLite (one statement: writers
//     are serialised), TiDB and CockroachDB, whose SKIP LOCKED cannot be
//     trusted.
//
// The strategy comes from the backend's probe (dialects.Capabilities'
// Recommended.ClaimStrategy) unless the caller names one.
//
// # Rows
//
// A row is ready (claimable once its due time has come), claimed (by an
// owner until claimed_until; once that has passed it is overdue and any
// worker may claim it again), done, or failed (its retries are used up).
// Claims take rows by priority (highest first), then due time, then id.
// All lease arithmetic is on the database clock.
package claimtable

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/schedlock/schedlock/dialects"
)

// DefaultTable is the task table's name when none is given.
const DefaultTable = "schedlock_tasks"

// Columns maps each role of the task table to a column name. The zero
// value of an optional role (Type, Payload, MaxRetries, Priority,
// UpdatedAt) means the table has no such column: claims then return the
// zero value for it (MaxRetries: Options' default; Priority: rows are
// ordered by due time alone).
type Columns struct {
	ID           string // integer primary key (required)
	Type         string // task type, text (optional)
	Payload      string // payload, bytes (optional)
	Status       string // ready / claimed / done / failed, text (required)
	DueAt        string // due time, timestamp in UTC (required)
	Priority     string // integer, highest first (optional)
	Retries      string // failures so far, integer (required)
	MaxRetries   string // failures allowed before the row fails for good (optional)
	Owner        string // the claiming worker, text (required)
	ClaimedUntil string // claim lease end, timestamp in UTC (required)
	Version      string // integer that grows on every claim and change (required)
	UpdatedAt    string // last change, timestamp in UTC (optional)
}

// DefaultColumns are the columns of the default task table.
func DefaultColumns() Columns {
	return Columns{
		ID: "id", Type: "task_type", Payload: "payload", Status: "status", DueAt: "due_at",
		Priority: "priority", Retries: "retries", MaxRetries: "max_retries", Owner: "owner",
		ClaimedUntil: "claimed_until", Version: "version", UpdatedAt: "updated_at",
	}
}

// Statuses are the values the status column holds for each state; the
// zero value of a field means the default (ready, claimed, done, failed).
// A user's own table maps its own words here (WAIT, RUNNING, …). Every
// statement binds them as parameters; they are never part of SQL text.
type Statuses struct {
	Ready, Claimed, Done, Failed string
}

// Default status values.
const (
	StatusReady   = "ready"
	StatusClaimed = "claimed"
	StatusDone    = "done"
	StatusFailed  = "failed"
)

// Table is a task table: its name (optionally schema-qualified), its
// column mapping and its status words. The zero value is the default
// table, DefaultTable with DefaultColumns.
type Table struct {
	Name     string
	Columns  Columns
	Statuses Statuses
}

var (
	identRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]{0,62}(\.[A-Za-z_][A-Za-z0-9_$]{0,62})?$`)
	columnRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]{0,62}$`)
)

// MaxStatusLen is the longest status value, in bytes.
const MaxStatusLen = 255

// Resolve fills t's defaults and validates it: the table and column names
// must be plain identifiers (they are spliced into SQL), the required
// roles mapped, no column mapped twice, the status values distinct (also
// without case), each
// 1 to MaxStatusLen bytes of UTF-8 without control characters. Errors
// match dialects.ErrInvalid.
func (t Table) Resolve() (Table, error) {
	if t.Name == "" {
		t.Name = DefaultTable
	}
	if !identRE.MatchString(t.Name) {
		return t, fmt.Errorf("%w: task table name %q is not a plain identifier (letters, digits, _ and $, optionally schema.table)", dialects.ErrInvalid, t.Name)
	}
	if t.Columns == (Columns{}) {
		t.Columns = DefaultColumns()
	}
	var missing []string
	seen := map[string]string{}
	for _, r := range t.Columns.roles() {
		if r.col == "" {
			if r.required {
				missing = append(missing, r.role)
			}
			continue
		}
		if !columnRE.MatchString(r.col) {
			return t, fmt.Errorf("%w: column %q (%s) is not a plain identifier", dialects.ErrInvalid, r.col, r.role)
		}
		key := strings.ToLower(r.col)
		if other, dup := seen[key]; dup {
			return t, fmt.Errorf("%w: column %s is mapped to both %s and %s", dialects.ErrInvalid, r.col, other, r.role)
		}
		seen[key] = r.role
	}
	if len(missing) > 0 {
		return t, fmt.Errorf("%w: the column mapping lacks the required roles %s", dialects.ErrInvalid, strings.Join(missing, ", "))
	}
	s := &t.Statuses
	for _, f := range []struct {
		v   *string
		def string
	}{{&s.Ready, StatusReady}, {&s.Claimed, StatusClaimed}, {&s.Done, StatusDone}, {&s.Failed, StatusFailed}} {
		if *f.v == "" {
			*f.v = f.def
		}
		if err := checkStatus(*f.v); err != nil {
			return t, err
		}
	}
	words := map[string]bool{}
	for _, v := range []string{s.Ready, s.Claimed, s.Done, s.Failed} {
		words[strings.ToLower(v)] = true
	}
	if len(words) != 4 {
		return t, fmt.Errorf("%w: the status values ready=%q claimed=%q done=%q failed=%q must all differ, also ignoring case (many collations compare without it)", dialects.ErrInvalid, s.Ready, s.Claimed, s.Done, s.Failed)
	}
	return t, nil
}

// role is one mapped column.
type role struct {
	role, col string
	required  bool
}

func (c Columns) roles() []role {
	return []role{
		{"id", c.ID, true}, {"type", c.Type, false}, {"payload", c.Payload, false},
		{"status", c.Status, true}, {"due_at", c.DueAt, true}, {"priority", c.Priority, false},
		{"retries", c.Retries, true}, {"max_retries", c.MaxRetries, false}, {"owner", c.Owner, true},
		{"claimed_until", c.ClaimedUntil, true}, {"version", c.Version, true}, {"updated_at", c.UpdatedAt, false},
	}
}

// WithoutAbsent returns c without the optional roles whose column is not
// among have (compared without case), except the roles named in keep
// ("type", "max_retries", …): the default column names then fit a table
// that lacks some optional columns. An optional role keep names, and
// every required role, stays mapped, for MissingColumns to report.
func (c Columns) WithoutAbsent(have []string, keep ...string) Columns {
	got := map[string]bool{}
	for _, h := range have {
		got[strings.ToLower(h)] = true
	}
	drop := func(role string, col *string) {
		if *col != "" && !got[strings.ToLower(*col)] && !slices.Contains(keep, role) {
			*col = ""
		}
	}
	drop("type", &c.Type)
	drop("payload", &c.Payload)
	drop("priority", &c.Priority)
	drop("max_retries", &c.MaxRetries)
	drop("updated_at", &c.UpdatedAt)
	return c
}

// MissingColumns returns the mapped columns of t that are not among have
// (compared without case), as "column (role)", in role order.
func (t Table) MissingColumns(have []string) []string {
	got := map[string]bool{}
	for _, c := range have {
		got[strings.ToLower(c)] = true
	}
	var out []string
	for _, r := range t.Columns.roles() {
		if r.col != "" && !got[strings.ToLower(r.col)] {
			out = append(out, r.col+" ("+r.role+")")
		}
	}
	return out
}

// checkStatus refuses a status value that no status column could hold
// sensibly: too long, not UTF-8, or with control characters.
func checkStatus(v string) error {
	switch {
	case len(v) > MaxStatusLen:
		return fmt.Errorf("%w: status value %q is longer than %d bytes", dialects.ErrInvalid, v[:32]+"…", MaxStatusLen)
	case !utf8.ValidString(v):
		return fmt.Errorf("%w: status value %q is not UTF-8", dialects.ErrInvalid, v)
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		return fmt.Errorf("%w: status value %q holds a control character", dialects.ErrInvalid, v)
	}
	return nil
}
