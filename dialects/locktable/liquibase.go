package locktable

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// LiquibaseBuilder is optionally implemented by a Builder that writes the
// Liquibase statements in its database's own terms; without it the
// portable forms below are used (? placeholders, CURRENT_TIMESTAMP).
type LiquibaseBuilder interface {
	// LiquibaseInspect selects, from the row ID = 1 of table: LOCKED,
	// LOCKGRANTED as integer milliseconds since the Unix epoch (NULL when
	// NULL; Liquibase writes it as wall-clock time in the session's time
	// zone), LOCKEDBY, and the database's now in epoch milliseconds.
	LiquibaseInspect(table string) string
	// LiquibaseRelease sets LOCKED to the first parameter (false) and
	// LOCKGRANTED and LOCKEDBY to NULL where ID = 1 and LOCKED equals the
	// second parameter (true) and, when guarded, LOCKEDBY equals the third.
	LiquibaseRelease(table string, guarded bool) string
}

// liquibaseInspectSQL is the portable read of the lock row; the times come
// back as the driver gives them and are converted by readTime.
const liquibaseInspectSQL = "SELECT LOCKED, LOCKGRANTED, LOCKEDBY, CURRENT_TIMESTAMP FROM %s WHERE ID = 1"

// The releases bind LOCKED's values (false, true) so that each driver sends
// its database's boolean: PostgreSQL boolean, MySQL BIT(1) or TINYINT(1)
// as 0/1, SQLite integer 0/1.
const (
	liquibaseReleaseSQL      = "UPDATE %s SET LOCKED = ?, LOCKGRANTED = NULL, LOCKEDBY = NULL WHERE ID = 1 AND LOCKED = ? AND LOCKEDBY = ?"
	liquibaseForceReleaseSQL = "UPDATE %s SET LOCKED = ?, LOCKGRANTED = NULL, LOCKEDBY = NULL WHERE ID = 1 AND LOCKED = ?"
)

// Liquibase administers the Liquibase lock table called table on the
// Locker's database, with the Locker's dialect SQL. It sends nothing.
func (l *Locker) Liquibase(table string) (dialects.LiquibaseLock, error) {
	return NewLiquibase(l.db, l.b, table)
}

var _ dialects.LiquibaseOpener = (*Locker)(nil)

// NewLiquibase returns the administration of Liquibase's lock table
// (dialects.LiquibaseTable when table is empty) on db with b's dialect.
func NewLiquibase(db *sql.DB, b Builder, table string) (dialects.LiquibaseLock, error) {
	t, err := dialects.ResolveAdminTable(dialects.Table{Preset: dialects.PresetLiquibase, Name: table})
	if err != nil {
		return nil, dialects.Wrap(b.Dialect(), "liquibase", err)
	}
	return &liquibase{db: db, b: b, table: t.Name}, nil
}

// liquibase is one Liquibase DATABASECHANGELOGLOCK table.
type liquibase struct {
	db    *sql.DB
	b     Builder
	table string
}

func (q *liquibase) Table() string { return q.table }

// Statements reports the SQL sent, by operation: inspect, release,
// force-release.
func (q *liquibase) Statements() map[string]string {
	return map[string]string{
		"inspect":       q.inspectSQL(),
		"release":       q.releaseSQL(true),
		"force-release": q.releaseSQL(false),
	}
}

func (q *liquibase) releaseSQL(guarded bool) string {
	if lb, ok := q.b.(LiquibaseBuilder); ok {
		return lb.LiquibaseRelease(q.table, guarded)
	}
	if guarded {
		return fmt.Sprintf(liquibaseReleaseSQL, q.table)
	}
	return fmt.Sprintf(liquibaseForceReleaseSQL, q.table)
}

func (q *liquibase) inspectSQL() string {
	if lb, ok := q.b.(LiquibaseBuilder); ok {
		return lb.LiquibaseInspect(q.table)
	}
	return fmt.Sprintf(liquibaseInspectSQL, q.table)
}

// Columns reads the table's column names; a missing table gives a
// *dialects.MissingTableError.
func (q *liquibase) Columns(ctx context.Context) ([]string, error) {
	cols, err := tableColumns(ctx, q.db, q.table)
	return cols, dialects.Wrap(q.b.Dialect(), "columns", q.classify(err))
}

func (q *liquibase) classify(err error) error {
	if err != nil && q.b.IsMissingTable(err) {
		return &dialects.MissingTableError{Table: q.table, CreateSQL: "(Liquibase creates it)", Err: err}
	}
	return err
}

// Inspect reads the row ID = 1.
func (q *liquibase) Inspect(ctx context.Context) (dialects.LiquibaseRow, bool, error) {
	var locked, granted, now any
	var owner sql.NullString
	err := q.db.QueryRowContext(ctx, q.inspectSQL()).Scan(&locked, &granted, &owner, &now)
	if errors.Is(err, sql.ErrNoRows) {
		return dialects.LiquibaseRow{}, false, nil
	}
	if err != nil {
		return dialects.LiquibaseRow{}, false, dialects.Wrap(q.b.Dialect(), "liquibase inspect", q.classify(err))
	}
	row := dialects.LiquibaseRow{Owner: owner.String}
	if row.Locked, err = truthy(locked); err != nil {
		return row, false, dialects.Wrap(q.b.Dialect(), "liquibase inspect", fmt.Errorf("read LOCKED: %w", err))
	}
	if row.LockedAt, err = readTime(granted); err != nil {
		return row, false, dialects.Wrap(q.b.Dialect(), "liquibase inspect", fmt.Errorf("read LOCKGRANTED: %w", err))
	}
	if row.DBNow, err = readTime(now); err != nil {
		return row, false, dialects.Wrap(q.b.Dialect(), "liquibase inspect", fmt.Errorf("read the database's now: %w", err))
	}
	return row, true, nil
}

// Release clears the lock while owner holds it.
func (q *liquibase) Release(ctx context.Context, owner string) (bool, error) {
	if owner == "" {
		return false, dialects.Wrap(q.b.Dialect(), "liquibase release", dialects.Invalidf("owner is empty: give the LOCKEDBY value to release for"))
	}
	return q.exec(ctx, "liquibase release", q.releaseSQL(true), false, true, owner)
}

// ForceRelease clears the lock whoever holds it.
func (q *liquibase) ForceRelease(ctx context.Context) (bool, error) {
	return q.exec(ctx, "liquibase force release", q.releaseSQL(false), false, true)
}

func (q *liquibase) exec(ctx context.Context, op, query string, args ...any) (bool, error) {
	res, err := q.db.ExecContext(ctx, query, args...)
	if err != nil {
		return false, dialects.Wrap(q.b.Dialect(), op, q.classify(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, dialects.Wrap(q.b.Dialect(), op, fmt.Errorf("read the affected row count: %w", err))
	}
	return n > 0, nil
}

// truthy reads a boolean column as drivers return it: bool (PostgreSQL),
// an integer (SQLite, Oracle NUMBER(1)), one byte 0x00/0x01 (MySQL BIT(1))
// or text "0"/"1"/"true"/"false" (MySQL TINYINT(1) in the text protocol).
func truthy(v any) (bool, error) {
	switch x := v.(type) {
	case nil:
		return false, nil
	case bool:
		return x, nil
	case int64:
		return x != 0, nil
	case float64:
		return x != 0, nil
	case []byte:
		if len(x) == 1 && x[0] <= 1 {
			return x[0] == 1, nil
		}
		return parseBool(string(x))
	case string:
		return parseBool(x)
	}
	return false, fmt.Errorf("unexpected value %v (%T)", v, v)
}

func parseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "t", "true", "y", "yes":
		return true, nil
	case "0", "f", "false", "n", "no", "":
		return false, nil
	}
	return false, fmt.Errorf("unexpected value %q", s)
}

// timeLayouts are the text forms of timestamps that drivers return.
var timeLayouts = []string{
	"2006-01-02 15:04:05.999999999-07:00",
	"2006-01-02T15:04:05.999999999-07:00",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
}

// readTime reads a time as drivers return it: epoch milliseconds (the
// LiquibaseBuilder form), a time.Time, or text; text without a zone and
// zone-less time.Time values are taken as UTC (SQLite's CURRENT_TIMESTAMP).
func readTime(v any) (time.Time, error) {
	switch x := v.(type) {
	case nil:
		return time.Time{}, nil
	case int64:
		return time.UnixMilli(x).UTC(), nil
	case float64:
		return time.UnixMilli(int64(x)).UTC(), nil
	case time.Time:
		return x.UTC(), nil
	case []byte:
		return parseTime(string(x))
	case string:
		return parseTime(x)
	}
	return time.Time{}, fmt.Errorf("unexpected value %v (%T)", v, v)
}

func parseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.UnixMilli(ms).UTC(), nil
	}
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("unexpected time %q", s)
}
