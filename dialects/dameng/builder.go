package dameng

import (
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/oralike"
	"github.com/schedlock/schedlock/dialects/locktable"
)

// SQL fragments for the database clock. sqlNow is UTC wall-clock time from
// SYSTIMESTAMP (TIMESTAMP WITH TIME ZONE, the database host's clock, read
// when the statement runs), cut to the milliseconds the TIMESTAMP(3)
// columns keep, so "now" compares and reads back exactly as a stored
// value would. SYSTIMESTAMP rather than GETUTCDATE(): it is the Oracle
// form DM documents with fractional seconds and a time zone, so
// SYS_EXTRACT_UTC makes it UTC whatever the session's zone [U: both
// functions exist in DM8; their precision on a live server is unverified].
const (
	sqlNow   = "CAST(SYS_EXTRACT_UTC(SYSTIMESTAMP) AS TIMESTAMP(3))"
	sqlEpoch = "TIMESTAMP '1970-01-01 00:00:00'"
	// nativeNames is the native table's name column, VARCHAR(255 CHAR).
	nativeNames = 255
)

// Builder writes the lease-table SQL of Dameng DM8. Placeholders are "?",
// bound in order, one value per occurrence.
//
// Acquire is one MERGE whose outcome is its row count
// (locktable.ResultRowsAffected); the new token is read back with Inspect
// after a successful acquire. Refresh, Release and Expire are UPDATEs.
// Two first acquires of a new name can both find no row and both insert;
// the second fails with a unique-constraint violation (-6602). That is the
// other session winning the race: Builder implements
// locktable.DuplicateKeyer, so the engine reports the lock as held.
type Builder struct{}

var (
	_ locktable.Builder        = (*Builder)(nil)
	_ locktable.Dropper        = (*Builder)(nil)
	_ locktable.DuplicateKeyer = (*Builder)(nil)
)

// Dialect implements locktable.Builder.
func (b *Builder) Dialect() string { return Name }

// MaxNameRunes is 255 for the native table, and the width the presets
// are created with (dialects.Schema.PresetNameWidth: 64 for shedlock, 128
// for sys_sched_lock).
func (b *Builder) MaxNameRunes(s dialects.Schema) int { return s.PresetNameWidth(nativeNames) }

// IsDuplicateKey implements locktable.DuplicateKeyer: -6602 and its
// siblings (see IsDuplicateKey).
func (b *Builder) IsDuplicateKey(err error) bool { return IsDuplicateKey(err) }

// IsMissingTable reports -2106, "invalid table or view name".
func (b *Builder) IsMissingTable(err error) bool { return IsMissingTable(err) }

// zone converts between UTC and s's writer time zone (see locktable.Zone):
// with one, the columns hold that zone's wall-clock time.
func zone(s dialects.Schema) locktable.Zone {
	return locktable.NewZone(s,
		func(expr, ms string) string { return "(" + plusMs(expr, ms) + ")" },
		func(wall time.Time) string { return "TIMESTAMP '" + wall.Format("2006-01-02 15:04:05.000") + "'" })
}

// plusMs is ts + ms milliseconds, for a BIGINT ms: the milliseconds are
// made DECIMAL before the division, so it cannot be an integer division.
func plusMs(ts, ms string) string {
	return ts + " + NUMTODSINTERVAL(CAST(" + ms + " AS DECIMAL(20, 3)) / 1000, 'SECOND')"
}

// Acquire is MERGE INTO t USING (SELECT ? … FROM DUAL): WHEN MATCHED it
// takes the row over only WHERE its lease has ended (until <= now),
// bumping the token; WHEN NOT MATCHED it inserts the row with token 1. A
// live row matches but is not updated, so the row count is 0.
func (b *Builder) Acquire(s dialects.Schema) locktable.Stmt {
	z := zone(s)
	until := z.ToLocal(plusMs(sqlNow, "s.at_most_ms"))
	sets := []string{
		"t." + s.OwnerCol + " = s.new_owner",
		"t." + s.LockedAtCol + " = " + z.ToLocal(sqlNow),
		"t." + s.UntilCol + " = " + until,
	}
	cols := []string{s.NameCol, s.OwnerCol, s.LockedAtCol, s.UntilCol}
	vals := []string{"s.new_name", "s.new_owner", z.ToLocal(sqlNow), until}
	if s.TokenCol != "" {
		sets = append(sets, "t."+s.TokenCol+" = t."+s.TokenCol+" + 1")
		cols = append(cols, s.TokenCol)
		vals = append(vals, "1")
	}
	sql := "MERGE INTO " + s.Table + " t" +
		" USING (SELECT ? AS new_name, ? AS new_owner, ? AS at_most_ms FROM DUAL) s" +
		" ON (t." + s.NameCol + " = s.new_name)" +
		" WHEN MATCHED THEN UPDATE SET " + strings.Join(sets, ", ") +
		" WHERE " + z.ToUTC("t."+s.UntilCol) + " <= " + sqlNow +
		" WHEN NOT MATCHED THEN INSERT (" + strings.Join(cols, ", ") + ") VALUES (" + strings.Join(vals, ", ") + ")"
	return locktable.Stmt{
		SQL:    sql,
		Args:   []locktable.Arg{locktable.ArgName, locktable.ArgOwner, locktable.ArgAtMostMs},
		Result: locktable.ResultRowsAffected,
	}
}

// Refresh sets until = now + at-most on the owner's live row.
//
// The Builder is no locktable.BatchRefresher: each lease is renewed by its
// own Refresh. No Dameng server or driver is available here to prove a
// batch form, so the engine falls back to one statement per lease, as
// before.
func (b *Builder) Refresh(s dialects.Schema) locktable.Stmt {
	z := zone(s)
	return ownerUpdate(s, s.UntilCol+" = "+z.ToLocal(plusMs(sqlNow, "?")), locktable.Repeat(z.Uses(), locktable.ArgAtMostMs)...)
}

// Release sets until = max(locked_at + at-least, now) on the owner's live
// row, written with CASE (the at-least bound twice).
func (b *Builder) Release(s dialects.Schema) locktable.Stmt {
	z := zone(s)
	atLeast := plusMs(z.ToUTC(s.LockedAtCol), "?")
	return ownerUpdate(s, s.UntilCol+" = "+z.ToLocal("CASE WHEN "+atLeast+" > "+sqlNow+" THEN "+atLeast+" ELSE "+sqlNow+" END"),
		locktable.Repeat(z.Uses(), locktable.ArgAtLeastMs, locktable.ArgAtLeastMs)...)
}

// Expire ends any owner's live lease now (administrative force-unlock).
func (b *Builder) Expire(s dialects.Schema) locktable.Stmt {
	return locktable.Stmt{
		SQL:    "UPDATE " + s.Table + " SET " + s.UntilCol + " = " + zone(s).ToLocal(sqlNow) + " WHERE " + s.NameCol + " = ? AND " + zone(s).ToUTC(s.UntilCol) + " > " + sqlNow,
		Args:   []locktable.Arg{locktable.ArgName},
		Result: locktable.ResultRowsAffected,
	}
}

// ownerUpdate is UPDATE … SET set (whose placeholders are bound to
// setArgs) WHERE the row is name's, owned by owner (and token, unless 0)
// and live.
func ownerUpdate(s dialects.Schema, set string, setArgs ...locktable.Arg) locktable.Stmt {
	where := s.NameCol + " = ? AND " + s.OwnerCol + " = ?"
	args := append(append([]locktable.Arg{}, setArgs...), locktable.ArgName, locktable.ArgOwner)
	if s.TokenCol != "" {
		where += " AND (" + s.TokenCol + " = ? OR ? = 0)"
		args = append(args, locktable.ArgToken, locktable.ArgToken)
	}
	return locktable.Stmt{
		SQL:    "UPDATE " + s.Table + " SET " + set + " WHERE " + where + " AND " + zone(s).ToUTC(s.UntilCol) + " > " + sqlNow,
		Args:   args,
		Result: locktable.ResultRowsAffected,
	}
}

// Inspect selects owner, token, locked_at, until and now of one row, times
// as BIGINT milliseconds since the epoch (the columns hold UTC).
func (b *Builder) Inspect(s dialects.Schema) locktable.Stmt {
	return locktable.Stmt{
		SQL:    "SELECT " + rowColumns(s) + " FROM " + s.Table + " WHERE " + s.NameCol + " = ?",
		Args:   []locktable.Arg{locktable.ArgName},
		Result: locktable.ResultRow,
	}
}

// List selects name and the Inspect columns of every row, by name.
func (b *Builder) List(s dialects.Schema) locktable.Stmt {
	return locktable.Stmt{
		SQL:    "SELECT " + s.NameCol + ", " + rowColumns(s) + " FROM " + s.Table + " ORDER BY " + s.NameCol,
		Result: locktable.ResultRow,
	}
}

func rowColumns(s dialects.Schema) string {
	token := "CAST(0 AS BIGINT)"
	if s.TokenCol != "" {
		token = s.TokenCol
	}
	return strings.Join([]string{s.OwnerCol, token, epochMs(s.LockedAtCol), epochMs(s.UntilCol), epochMs(sqlNow)}, ", ")
}

// epochMs is expr (a TIMESTAMP holding UTC) as BIGINT milliseconds since
// the Unix epoch, from the interval since the epoch field by field, so no
// DATE conversion rounds the milliseconds away; the CAST makes the driver
// return an integer, not a DECIMAL.
func epochMs(expr string) string {
	d := "(" + expr + " - " + sqlEpoch + ")"
	return "CAST(EXTRACT(DAY FROM " + d + ") * 86400000 + EXTRACT(HOUR FROM " + d + ") * 3600000 + EXTRACT(MINUTE FROM " + d +
		") * 60000 + ROUND(EXTRACT(SECOND FROM " + d + ") * 1000) AS BIGINT)"
}

// Create is CREATE TABLE for s, with the name column as primary key; a
// plain CREATE TABLE a DBA can run as it is (TableLocker.CreateTable
// treats an existing table as success):
//
//   - schedlock (native): name VARCHAR(255 CHAR), TIMESTAMP(3) times
//     holding UTC, owner VARCHAR(255 CHAR), token BIGINT DEFAULT 0;
//   - shedlock: ShedLock's table, name VARCHAR(64 CHAR);
//   - sys_sched_lock: lock_name VARCHAR(128 CHAR).
//
// Lengths are in characters (CHAR), so 64 multi-byte characters fit
// whatever the database's LENGTH_IN_CHAR [U]; an existing table declared
// in bytes refuses long multi-byte names with a "string too long" error.
func (b *Builder) Create(s dialects.Schema) string {
	cols := []string{
		s.NameCol + " VARCHAR(" + itoa(b.MaxNameRunes(s)) + " CHAR) NOT NULL",
		s.UntilCol + " TIMESTAMP(3) NOT NULL",
		s.LockedAtCol + " TIMESTAMP(3) NOT NULL",
		s.OwnerCol + " VARCHAR(255 CHAR) NOT NULL",
	}
	if s.TokenCol != "" {
		cols = append(cols, s.TokenCol+" BIGINT DEFAULT 0 NOT NULL")
	}
	cols = append(cols, "PRIMARY KEY ("+s.NameCol+")")
	return "CREATE TABLE " + s.Table + " (\n  " + strings.Join(cols, ",\n  ") + "\n)"
}

// Drop drops the table of s and succeeds when it does not exist (SQLCODE
// -2106): a DMSQL block, which every DM8 release runs, where DROP TABLE
// IF EXISTS arrived only in later ones [U]. The table name is an
// identifier checked by dialects.Table.Schema.
func (b *Builder) Drop(s dialects.Schema) string {
	return oralike.Ignoring("DROP TABLE "+s.Table, -codeInvalidTable)
}
