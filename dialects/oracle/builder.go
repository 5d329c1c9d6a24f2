package oracle

import (
	"strconv"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
)

// SQL fragments for the database clock. sqlNow is UTC wall-clock time cut
// to the milliseconds the TIMESTAMP(3) columns keep, so "now" compares and
// reads back exactly as a stored value would; SYSTIMESTAMP is read at
// statement execution (unlike PostgreSQL's now(), it is not the
// transaction start) from the database host's clock.
const (
	sqlNow      = "CAST(SYS_EXTRACT_UTC(SYSTIMESTAMP) AS TIMESTAMP(3))"
	sqlEpoch    = "TIMESTAMP '1970-01-01 00:00:00'"
	nativeNames = 255 // VARCHAR2(255 CHAR)
)

// Builder writes the lease-table SQL of Oracle 11g and later. Placeholders
// are positional (:1, :2, …), each used once, as go-ora binds them.
//
// Acquire is one MERGE whose outcome is its row count
// (locktable.ResultRowsAffected): MERGE has no RETURNING clause before
// 23ai, so the new token is read back with Inspect after a successful
// acquire (one more round trip, on the native table only). Refresh,
// Release and Expire are UPDATEs, whose row count Oracle reports as rows
// matched, so a refresh within the same millisecond still counts.
//
// Two first acquires of a new name can both find no row and both insert;
// the second gets ORA-00001. That is the other node winning the race:
// Builder is a locktable.DuplicateKeyer, so the engine reports the lock as
// held by the winner, never as an error.
type Builder struct{}

var (
	_ locktable.Builder          = (*Builder)(nil)
	_ locktable.Dropper          = (*Builder)(nil)
	_ locktable.DuplicateKeyer   = (*Builder)(nil)
	_ locktable.LiquibaseBuilder = (*Builder)(nil)
)

// zone converts between UTC and s's writer time zone (see locktable.Zone):
// with one, the columns hold that zone's wall-clock time.
func zone(s dialects.Schema) locktable.Zone {
	return locktable.NewZone(s,
		func(expr, ms string) string { return "(" + expr + " + NUMTODSINTERVAL(" + ms + " / 1000, 'SECOND'))" },
		func(wall time.Time) string { return "TIMESTAMP '" + wall.Format("2006-01-02 15:04:05.000") + "'" })
}

// positional numbers the "?" placeholders of sql :1, :2, … in order.
func positional(sql string) string {
	var b strings.Builder
	n := 0
	for _, r := range sql {
		if r == '?' {
			n++
			b.WriteString(":" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Dialect implements locktable.Builder.
func (b *Builder) Dialect() string { return Name }

// MaxNameRunes is 255 for the native table, and the width the presets
// are created with (dialects.Schema.PresetNameWidth: 64 for shedlock, 128
// for sys_sched_lock).
func (b *Builder) MaxNameRunes(s dialects.Schema) int { return s.PresetNameWidth(nativeNames) }

// Acquire is MERGE INTO t USING (SELECT :name, :owner, :at_most FROM dual):
// WHEN MATCHED it takes the row over only WHERE its lease has ended
// (until <= now), bumping the token; WHEN NOT MATCHED it inserts the row
// with token 1. A live row matches but is not updated, so the row count is
// 0. Concurrent takeovers of one expired row serialise on the row lock, and
// Oracle re-evaluates the WHERE for the one that waited, which then updates
// nothing.
func (b *Builder) Acquire(s dialects.Schema) locktable.Stmt {
	interval := "NUMTODSINTERVAL(s.at_most_ms / 1000, 'SECOND')"
	z := zone(s)
	sets := []string{
		"t." + s.OwnerCol + " = s.new_owner",
		"t." + s.LockedAtCol + " = " + z.ToLocal(sqlNow),
		"t." + s.UntilCol + " = " + z.ToLocal(sqlNow+" + "+interval),
	}
	cols := []string{s.NameCol, s.OwnerCol, s.LockedAtCol, s.UntilCol}
	vals := []string{"s.new_name", "s.new_owner", z.ToLocal(sqlNow), z.ToLocal(sqlNow + " + " + interval)}
	if s.TokenCol != "" {
		sets = append(sets, "t."+s.TokenCol+" = t."+s.TokenCol+" + 1")
		cols = append(cols, s.TokenCol)
		vals = append(vals, "1")
	}
	sql := "MERGE INTO " + s.Table + " t" +
		" USING (SELECT :1 AS new_name, :2 AS new_owner, :3 AS at_most_ms FROM dual) s" +
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
// own Refresh. A batch form (an IN list of (name, token) pairs) could not
// be run against an Oracle server here, and the offline simulator does
// not read a multi-row IN list, so it would ship unverified; the engine
// falls back to one statement per lease, as before.
func (b *Builder) Refresh(s dialects.Schema) locktable.Stmt {
	z := zone(s)
	return ownerUpdate(s, s.UntilCol+" = "+z.ToLocal(sqlNow+" + NUMTODSINTERVAL(? / 1000, 'SECOND')"), locktable.Repeat(z.Uses(), locktable.ArgAtMostMs)...)
}

// Release sets until = GREATEST(locked_at + at-least, now) on the owner's
// live row.
func (b *Builder) Release(s dialects.Schema) locktable.Stmt {
	z := zone(s)
	return ownerUpdate(s, s.UntilCol+" = "+z.ToLocal("GREATEST("+z.ToUTC(s.LockedAtCol)+" + NUMTODSINTERVAL(? / 1000, 'SECOND'), "+sqlNow+")"), locktable.Repeat(z.Uses(), locktable.ArgAtLeastMs)...)
}

// Expire ends any owner's live lease now (administrative force-unlock).
func (b *Builder) Expire(s dialects.Schema) locktable.Stmt {
	return locktable.Stmt{
		SQL:    "UPDATE " + s.Table + " SET " + s.UntilCol + " = " + zone(s).ToLocal(sqlNow) + " WHERE " + s.NameCol + " = :1 AND " + zone(s).ToUTC(s.UntilCol) + " > " + sqlNow,
		Args:   []locktable.Arg{locktable.ArgName},
		Result: locktable.ResultRowsAffected,
	}
}

// ownerUpdate is UPDATE … SET set (whose "?" placeholders are bound to
// setArgs) WHERE the row is name's, owned by owner (and token, unless 0)
// and live; the placeholders are numbered :1, :2, … in order.
func ownerUpdate(s dialects.Schema, set string, setArgs ...locktable.Arg) locktable.Stmt {
	where := s.NameCol + " = ? AND " + s.OwnerCol + " = ?"
	args := append(setArgs, locktable.ArgName, locktable.ArgOwner)
	if s.TokenCol != "" {
		where += " AND (" + s.TokenCol + " = ? OR ? = 0)"
		args = append(args, locktable.ArgToken, locktable.ArgToken)
	}
	return locktable.Stmt{
		SQL:    positional("UPDATE " + s.Table + " SET " + set + " WHERE " + where + " AND " + zone(s).ToUTC(s.UntilCol) + " > " + sqlNow),
		Args:   args,
		Result: locktable.ResultRowsAffected,
	}
}

// Inspect selects owner, token, locked_at, until and now of one row, times
// as integer milliseconds since the epoch (the columns hold UTC).
func (b *Builder) Inspect(s dialects.Schema) locktable.Stmt {
	return locktable.Stmt{
		SQL:    "SELECT " + rowColumns(s) + " FROM " + s.Table + " WHERE " + s.NameCol + " = :1",
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
	token := "0"
	if s.TokenCol != "" {
		token = s.TokenCol
	}
	return strings.Join([]string{s.OwnerCol, token, epochMs(s.LockedAtCol), epochMs(s.UntilCol), epochMs(sqlNow)}, ", ")
}

// epochMs is expr (a TIMESTAMP holding UTC) as integer milliseconds since
// the Unix epoch, computed from the interval since the epoch field by
// field, so no DATE conversion rounds away the milliseconds.
func epochMs(expr string) string {
	d := "(" + expr + " - " + sqlEpoch + ")"
	return "(EXTRACT(DAY FROM " + d + ") * 86400000 + EXTRACT(HOUR FROM " + d + ") * 3600000 + EXTRACT(MINUTE FROM " + d +
		") * 60000 + ROUND(EXTRACT(SECOND FROM " + d + ") * 1000))"
}

// IsMissingTable reports ORA-00942 (table or view does not exist).
func (b *Builder) IsMissingTable(err error) bool { return oraCode(err) == oraNoSuchTable }

// IsDuplicateKey implements locktable.DuplicateKeyer: ORA-00001 from the
// acquire MERGE means a concurrent MERGE inserted the same new name first.
func (b *Builder) IsDuplicateKey(err error) bool { return IsDuplicateKey(err) }
