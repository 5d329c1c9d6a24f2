package postgres

import (
	"strconv"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
)

// Builder writes the PostgreSQL lease-table SQL (locktable.Builder).
//
// Times are timestamp(3) without time zone holding UTC. "Now" is always
// date_trunc('milliseconds', clock_timestamp() AT TIME ZONE 'UTC'): the
// wall clock at the moment the statement evaluates it (now() would be the
// start of the transaction), cut to the column's millisecond precision so a
// stored now is never later than the real one (rounding up could keep a
// just-released lock alive for half a millisecond). Every statement returns
// its outcome with RETURNING (locktable.ResultRow): the token, or 1 for
// schemas without a token column. Parameters carry explicit casts so the
// server needs no inference. Inspect and List give times as bigint
// milliseconds since the Unix epoch; extract(epoch FROM timestamp) reads a
// zone-less timestamp as UTC, which is what the table holds. With a writer
// time zone (dialects.Schema.TimeZone) the columns hold that zone's
// wall-clock time: values are converted to it as they are written and
// from it as they are compared (locktable.Zone); Inspect and List return
// them as stored, and the engine reads them in the zone.
type Builder struct{}

var (
	_ locktable.Builder        = Builder{}
	_ locktable.BatchRefresher = Builder{}
)

const (
	// nativeNameRunes is the native table's name column: varchar(512) keeps
	// any name, at 4 bytes a character, under the btree key limit (~2.7kB).
	nativeNameRunes = 512
	// ownerBytes matches dialects.Options' 255-byte owner limit.
	ownerBytes = 255
)

// now is the database clock in UTC, millisecond precision.
const now = "date_trunc('milliseconds', clock_timestamp() AT TIME ZONE 'UTC')"

// epochMs renders a timestamp expression as bigint milliseconds since the
// Unix epoch, rounded down.
func epochMs(expr string) string {
	return "floor(extract(epoch FROM " + expr + ") * 1000)::bigint"
}

// zone converts between UTC and s's writer time zone (see locktable.Zone).
func zone(s dialects.Schema) locktable.Zone {
	return locktable.NewZone(s,
		func(expr, ms string) string { return "(" + expr + " + " + ms + " * interval '1 millisecond')" },
		func(wall time.Time) string { return "TIMESTAMP '" + wall.Format("2006-01-02 15:04:05.000") + "'" })
}

// Dialect is "postgres".
func (Builder) Dialect() string { return Name }

// MaxNameRunes is 512 for the native table, and the width the presets
// are created with (dialects.Schema.PresetNameWidth: 64 for shedlock, 128
// for sys_sched_lock).
func (Builder) MaxNameRunes(s dialects.Schema) int { return s.PresetNameWidth(nativeNameRunes) }

// Acquire inserts the row, or takes over an expired one with
// ON CONFLICT … DO UPDATE … WHERE until <= now. locked_at and until come
// from one clock reading, so until - locked_at is exactly AtMost.
func (Builder) Acquire(s dialects.Schema) locktable.Stmt {
	z := zone(s)
	cols := []string{s.NameCol, s.OwnerCol, s.LockedAtCol, s.UntilCol}
	vals := []string{"$1::text", "$2::text", z.ToLocal("n.now"), z.ToLocal("n.now + $3::bigint * interval '1 millisecond'")}
	sets := []string{
		s.OwnerCol + " = EXCLUDED." + s.OwnerCol,
		s.LockedAtCol + " = EXCLUDED." + s.LockedAtCol,
		s.UntilCol + " = EXCLUDED." + s.UntilCol,
	}
	if s.TokenCol != "" {
		cols = append(cols, s.TokenCol)
		vals = append(vals, "1")
		sets = append(sets, s.TokenCol+" = t."+s.TokenCol+" + 1")
	}
	sql := "INSERT INTO " + s.Table + " AS t (" + strings.Join(cols, ", ") + ")\n" +
		"SELECT " + strings.Join(vals, ", ") + "\n" +
		"FROM (SELECT " + now + " AS now) AS n\n" +
		"ON CONFLICT (" + s.NameCol + ") DO UPDATE SET " + strings.Join(sets, ", ") + "\n" +
		"WHERE " + z.ToUTC("t."+s.UntilCol) + " <= " + now + "\n" +
		returning(s)
	return locktable.Stmt{
		SQL:    sql,
		Args:   []locktable.Arg{locktable.ArgName, locktable.ArgOwner, locktable.ArgAtMostMs},
		Result: locktable.ResultRow,
	}
}

// Refresh sets until = now + AtMost on the owner's live row.
func (Builder) Refresh(s dialects.Schema) locktable.Stmt {
	return ownedUpdate(s, refreshSet(s), locktable.ArgAtMostMs)
}

// refreshSet is the SET list of Refresh and RefreshBatch, AtMost in $3.
func refreshSet(s dialects.Schema) string {
	return s.UntilCol + " = " + zone(s).ToLocal(now+" + $3::bigint * interval '1 millisecond'")
}

// batchSize is the most leases one RefreshBatch statement renews.
const batchSize = 1000

// MaxBatch is 1000 leases per RefreshBatch statement.
func (Builder) MaxBatch() int { return batchSize }

// RefreshBatch renews the owner's live rows among $1 (the stored names,
// text[]) with their tokens in $4 (bigint[], matched name by name), $2
// the owner and $3 AtMost, as Refresh renews one; RETURNING gives the
// names renewed. The pairs are zipped by two set-returning functions in
// one select list, which every PostgreSQL since 9.2 (and openGauss)
// reads as one row per pair when the arrays have one length.
func (Builder) RefreshBatch(s dialects.Schema, _ int) locktable.Stmt {
	src := "SELECT unnest($1::text[]) AS name"
	args := []locktable.Arg{locktable.ArgNameArray, locktable.ArgOwner, locktable.ArgAtMostMs}
	where := "t." + s.NameCol + " = b.name AND t." + s.OwnerCol + " = $2::text"
	if s.TokenCol != "" {
		src += ", unnest($4::bigint[]) AS token"
		where += " AND t." + s.TokenCol + " = b.token"
		args = append(args, locktable.ArgTokenArray)
	}
	where += " AND " + zone(s).ToUTC("t."+s.UntilCol) + " > " + now
	return locktable.Stmt{
		SQL: "UPDATE " + s.Table + " AS t SET " + refreshSet(s) + "\nFROM (" + src + ") AS b\nWHERE " + where + "\n" +
			"RETURNING t." + s.NameCol,
		Args:   args,
		Result: locktable.ResultRow,
	}
}

// Release sets until = GREATEST(locked_at + AtLeast, now) on the owner's
// live row.
func (Builder) Release(s dialects.Schema) locktable.Stmt {
	z := zone(s)
	return ownedUpdate(s, s.UntilCol+" = "+z.ToLocal("GREATEST("+z.ToUTC("t."+s.LockedAtCol)+" + $3::bigint * interval '1 millisecond', "+now+")"), locktable.ArgAtLeastMs)
}

// ownedUpdate is the UPDATE behind Refresh and Release: $1 name, $2 owner,
// $3 the duration arg, $4 the token (0 skips the check) when the schema has
// a token column; only a row whose lease is still running matches.
func ownedUpdate(s dialects.Schema, set string, duration locktable.Arg) locktable.Stmt {
	args := []locktable.Arg{locktable.ArgName, locktable.ArgOwner, duration}
	where := "t." + s.NameCol + " = $1::text AND t." + s.OwnerCol + " = $2::text"
	if s.TokenCol != "" {
		where += " AND (t." + s.TokenCol + " = $4::bigint OR $4::bigint = 0)"
		args = append(args, locktable.ArgToken)
	}
	where += " AND " + zone(s).ToUTC("t."+s.UntilCol) + " > " + now
	return locktable.Stmt{
		SQL:    "UPDATE " + s.Table + " AS t SET " + set + "\nWHERE " + where + "\n" + returning(s),
		Args:   args,
		Result: locktable.ResultRow,
	}
}

// Expire sets until = now on a live row, whoever owns it.
func (Builder) Expire(s dialects.Schema) locktable.Stmt {
	return locktable.Stmt{
		SQL: "UPDATE " + s.Table + " AS t SET " + s.UntilCol + " = " + zone(s).ToLocal(now) + "\n" +
			"WHERE t." + s.NameCol + " = $1::text AND " + zone(s).ToUTC("t."+s.UntilCol) + " > " + now + "\n" +
			returning(s),
		Args:   []locktable.Arg{locktable.ArgName},
		Result: locktable.ResultRow,
	}
}

// returning is the RETURNING clause: the token, or 1 without a token column.
func returning(s dialects.Schema) string {
	if s.TokenCol == "" {
		return "RETURNING 1::bigint"
	}
	return "RETURNING t." + s.TokenCol
}

// selectRow lists owner, token, locked_at, until and the database's now.
func selectRow(s dialects.Schema) string {
	token := "0::bigint"
	if s.TokenCol != "" {
		token = "t." + s.TokenCol
	}
	return "t." + s.OwnerCol + ", " + token + ", " +
		epochMs("t."+s.LockedAtCol) + ", " + epochMs("t."+s.UntilCol) + ", " + epochMs("clock_timestamp()")
}

// Inspect reads the row of $1.
func (Builder) Inspect(s dialects.Schema) locktable.Stmt {
	return locktable.Stmt{
		SQL:    "SELECT " + selectRow(s) + "\nFROM " + s.Table + " AS t WHERE t." + s.NameCol + " = $1::text",
		Args:   []locktable.Arg{locktable.ArgName},
		Result: locktable.ResultRow,
	}
}

// List reads every row, ordered by name.
func (Builder) List(s dialects.Schema) locktable.Stmt {
	return locktable.Stmt{
		SQL:    "SELECT t." + s.NameCol + ", " + selectRow(s) + "\nFROM " + s.Table + " AS t ORDER BY t." + s.NameCol,
		Result: locktable.ResultRow,
	}
}

// Create is CREATE TABLE IF NOT EXISTS with the preset's columns: the name
// as primary key (varchar(512) native, varchar(64) for shedlock,
// varchar(128) for sys_sched_lock), the owner as varchar(255), times as
// timestamp(3), and on the native table token bigint NOT NULL DEFAULT 0.
func (b Builder) Create(s dialects.Schema) string {
	cols := []string{
		s.NameCol + " varchar(" + strconv.Itoa(b.MaxNameRunes(s)) + ") NOT NULL",
		s.UntilCol + " timestamp(3) NOT NULL",
		s.LockedAtCol + " timestamp(3) NOT NULL",
		s.OwnerCol + " varchar(" + strconv.Itoa(ownerBytes) + ") NOT NULL",
	}
	if s.Preset == dialects.PresetSysSchedLock {
		// Its documented column order: lock_name, lock_owner, acquire_time, expire_time.
		cols[1], cols[3] = cols[3], cols[1]
	}
	if s.TokenCol != "" {
		cols = append(cols, s.TokenCol+" bigint NOT NULL DEFAULT 0")
	}
	cols = append(cols, "PRIMARY KEY ("+s.NameCol+")")
	return "CREATE TABLE IF NOT EXISTS " + s.Table + " (\n  " + strings.Join(cols, ",\n  ") + "\n)"
}

// IsMissingTable reports SQLSTATE 42P01 (undefined_table).
func (Builder) IsMissingTable(err error) bool { return hasCode(err, codeUndefinedTable) }
