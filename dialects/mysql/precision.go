package mysql

import (
	"strings"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
)

var _ locktable.UntilPrecisionBuilder = (*Builder)(nil)

// UntilPrecision reads the fractional-second digits of the lease-end and
// locked-at columns, the fewer of the two, from information_schema.COLUMNS
// (DATETIME_PRECISION: 0 for DATETIME and TIMESTAMP, 3 for DATETIME(3)),
// located as NameColumn locates the name column. A missing table gives
// NULL.
func (b *Builder) UntilPrecision(s dialects.Schema) string {
	schema, table := "DATABASE()", s.Table
	if i := strings.IndexByte(s.Table, '.'); i >= 0 {
		schema, table = literal(s.Table[:i]), s.Table[i+1:]
	}
	return "SELECT MIN(DATETIME_PRECISION) FROM information_schema.COLUMNS" +
		" WHERE TABLE_SCHEMA = " + schema + " AND TABLE_NAME = " + literal(table) +
		" AND COLUMN_NAME IN (" + literal(s.LockedAtCol) + ", " + literal(s.UntilCol) + ")"
}

// WholeSecondsRemedy gives the locked-at and lease-end columns
// milliseconds: DATETIME(3), or TIMESTAMP(3) for TIMESTAMP columns.
func (b *Builder) WholeSecondsRemedy(s dialects.Schema) string {
	return "ALTER TABLE " + s.Table + " MODIFY " + s.LockedAtCol + " DATETIME(3) NOT NULL, MODIFY " + s.UntilCol +
		" DATETIME(3) NOT NULL (TIMESTAMP(3) where they are TIMESTAMP)"
}

// wholeUp is the lease-end value expr as the statements write it: expr
// itself, or with s.UntilWholeSeconds expr rounded up to the next whole
// second. A DATETIME(0) column would otherwise drop the fraction (MariaDB
// truncates; MySQL rounds to nearest unless TIME_TRUNCATE_FRACTIONAL), so
// the stored lease could end up to a second before the holder's. (The
// locked-at is written as it is; locktable binds a non-zero at-least a
// second longer on such a table.) Adding 999999 µs and formatting without
// the fraction truncates on both (expr has at most microseconds), and the
// result, a whole second, is stored exactly. expr is evaluated once, so
// its placeholders are bound once.
func wholeUp(s dialects.Schema, expr string) string {
	if !s.UntilWholeSeconds {
		return expr
	}
	return "CAST(DATE_FORMAT(TIMESTAMPADD(MICROSECOND, 999999, " + expr + "), '%Y-%m-%d %H:%i:%s') AS DATETIME)"
}
