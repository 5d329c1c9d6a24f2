package locktable

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// UntilPrecisionBuilder is implemented by a Builder that reads from the
// catalog how many fractional-second digits the lease-end and locked-at
// columns of an existing table keep, and that renders whole-second lease
// ends when dialects.Schema.UntilWholeSeconds is set: the lease-end values
// it writes in Acquire, Refresh and Release are then rounded up to the
// next whole second, so a column that drops the fraction never shortens a
// lease. The locked-at the column keeps may be up to a second before the
// acquire, so the Locker binds a non-zero at-least one second longer
// (storedAtLeast): locked-at + at-least never ends before the holder's.
//
// UntilPrecision is a query without parameters that returns one row, the
// number of fractional digits (NULL when unknown), or no row when the
// table or the column does not exist. It is read with the name column (NameColumnBuilder),
// once per Locker, so only on preset tables; schedlock's own table is
// created with milliseconds.
//
// WholeSecondsRemedy is the statement an operator runs to give the two
// columns milliseconds.
type UntilPrecisionBuilder interface {
	UntilPrecision(s dialects.Schema) string
	WholeSecondsRemedy(s dialects.Schema) string
}

// UntilWholeSeconds reports whether the catalog said the lease-end column
// keeps whole seconds only, so the Locker rounds the lease ends it writes
// up to the next whole second. It is false until the column was read
// (NameColumn).
func (l *Locker) UntilWholeSeconds() bool { return l.wholeSeconds.Load() }

// WholeSecondsRemedy is the statement that gives the table's time columns
// milliseconds when UntilWholeSeconds reports whole seconds, else "".
func (l *Locker) WholeSecondsRemedy() string {
	upb, ok := l.b.(UntilPrecisionBuilder)
	if !ok || !l.wholeSeconds.Load() {
		return ""
	}
	return upb.WholeSecondsRemedy(l.schema)
}

// storedAtLeast is the at-least the statements bind: atLeast, or on a
// table with whole-second times (UntilWholeSeconds) and a non-zero
// atLeast one second more, since the stored locked-at dropped the
// acquire's fraction (truncated on MariaDB, rounded on MySQL). A zero
// at-least stays zero, so a release frees the lock at once.
func (l *Locker) storedAtLeast(atLeast time.Duration) time.Duration {
	if atLeast > 0 && l.wholeSeconds.Load() {
		return atLeast + time.Second
	}
	return atLeast
}

// readUntilPrecision reads the lease-end column's precision and, when it
// is 0, switches the lease statements to whole-second lease ends. A table
// or column the catalog does not show leaves them as they are. The caller
// holds nameColMu.
func (l *Locker) readUntilPrecision(ctx context.Context) error {
	upb, ok := l.b.(UntilPrecisionBuilder)
	if !ok {
		return nil
	}
	var digits sql.NullInt64
	err := l.retrying(ctx, func() error {
		return l.db.QueryRowContext(ctx, upb.UntilPrecision(l.schema)).Scan(&digits)
	})
	if errors.Is(err, sql.ErrNoRows) || (err != nil && l.b.IsMissingTable(err)) {
		return nil
	}
	if err != nil {
		return dialects.Wrap(l.b.Dialect(), "read lease-end column", l.classify(fmt.Errorf("read the precision of %s from the catalog: %w", l.schema.UntilCol, err)))
	}
	l.wholeSeconds.Store(digits.Valid && digits.Int64 == 0)
	return nil
}
