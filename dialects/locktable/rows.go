package locktable

import (
	"context"
	"database/sql"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// inspectStored reads the row whose stored name is stored.
func (l *Locker) inspectStored(ctx context.Context, stored string) (dialects.Row, bool, error) {
	rows, err := l.query(ctx, opInspect, binding{name: stored})
	if err != nil {
		return dialects.Row{}, false, err
	}
	defer rows.Close()
	if !rows.Next() {
		return dialects.Row{}, false, l.classify(rows.Err())
	}
	row, err := l.scanRow(rows, false)
	if err != nil {
		return dialects.Row{}, false, err
	}
	row.Name = stored
	return row, true, rows.Close()
}

// scanRow reads one Inspect row (owner, token, locked_at, until, now) or,
// withName, one List row (name first). Times are integer milliseconds since
// the Unix epoch; NULLs (tables written by other tools) read as zero.
func (l *Locker) scanRow(rows *sql.Rows, withName bool) (dialects.Row, error) {
	var (
		name, owner            sql.NullString
		token                  sql.NullInt64
		lockedAt, until, dbNow sql.NullInt64
	)
	dest := []any{&owner, &token, &lockedAt, &until, &dbNow}
	if withName {
		dest = append([]any{&name}, dest...)
	}
	if err := rows.Scan(dest...); err != nil {
		return dialects.Row{}, err
	}
	hasToken := l.schema.TokenCol != ""
	row := dialects.Row{
		Name:     name.String,
		Owner:    owner.String,
		HasToken: hasToken,
		LockedAt: l.wallTime(lockedAt),
		Until:    l.wallTime(until),
		DBNow:    msTime(dbNow),
	}
	if hasToken {
		row.Token = token.Int64
	}
	return row, nil
}

// msTime turns milliseconds since the Unix epoch into a UTC time; NULL is
// the zero time.
func msTime(ms sql.NullInt64) time.Time {
	if !ms.Valid {
		return time.Time{}
	}
	return time.UnixMilli(ms.Int64).UTC()
}
