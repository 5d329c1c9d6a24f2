package sqlserver

import (
	"strconv"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
)

// Builder writes the SQL Server lease-table SQL (locktable.Builder).
//
// Times are datetime2(3) holding UTC. "Now" is SYSUTCDATETIME() converted
// to datetime2(3), read once per statement in a derived table n; the
// conversion rounds to the millisecond, and since every comparison and
// every stored time uses that same rounded clock, their order is the
// clock's order. Durations are added as whole days plus the remaining
// milliseconds, because DATEADD takes an int and a lease of 25 days or
// more in milliseconds does not fit in one.
//
// Every statement reports its outcome with OUTPUT (locktable.ResultRow):
// the token, or 1 for schemas without a token column; no row means the
// statement changed nothing. Acquire is one MERGE WITH (HOLDLOCK): the
// key-range lock it holds until the statement ends keeps two sessions from
// both inserting a new name. Parameters are go-mssqldb's ordinal @p1, @p2…;
// a parameter may appear more than once. Inspect and List give times as
// bigint milliseconds since the Unix epoch, computed without DATEDIFF_BIG
// (SQL Server 2016+) so that 2012 and 2014 work too.
//
// A table with an enabled trigger refuses OUTPUT without INTO (error 334);
// lock tables have none.
//
// A duplicate key on acquire (2627, 2601: another session inserted the
// same new name first) is the lock held by that session: Builder is a
// locktable.DuplicateKeyer, so the engine reports it as held, not as an
// error.
type Builder struct{}

var (
	_ locktable.Builder          = Builder{}
	_ locktable.Dropper          = Builder{}
	_ locktable.DuplicateKeyer   = Builder{}
	_ locktable.LiquibaseBuilder = Builder{}
)

const (
	// nativeNameUnits is the native table's name column, nvarchar(255):
	// 510 bytes, within the 900-byte key limit of SQL Server 2012 and
	// 2014.
	nativeNameUnits = 255
	// ownerUnits matches dialects.Options' 255-byte owner limit.
	ownerUnits = 255
	// nameCollation compares names and owners by code point, case and
	// accent sensitive, like sp_getapplock; SQL Server still ignores
	// trailing spaces in comparisons, which FitName keeps out of stored
	// names.
	nameCollation = "Latin1_General_100_BIN2"
)

// nowSQL is the database clock: UTC, millisecond precision.
const nowSQL = "CAST(SYSUTCDATETIME() AS datetime2(3))"

// clockTable is the derived table n with the statement's one reading of
// the clock.
const clockTable = "(SELECT " + nowSQL + " AS now) AS n"

// plusMs is the expression base + ms milliseconds, for a bigint ms.
func plusMs(base, ms string) string {
	return "DATEADD(millisecond, CAST(" + ms + " % 86400000 AS int), DATEADD(day, CAST(" + ms + " / 86400000 AS int), " + base + "))"
}

// epochMs renders a datetime2 expression as bigint milliseconds since the
// Unix epoch, rounded down: whole days since 1970-01-01 plus milliseconds
// since midnight (DATEDIFF counts boundaries crossed, so a finer fraction
// is cut off).
func epochMs(expr string) string {
	return "(CAST(DATEDIFF(day, CAST('19700101' AS date), " + expr + ") AS bigint) * 86400000 + DATEDIFF(millisecond, CAST(CAST(" + expr + " AS date) AS datetime2(3)), " + expr + "))"
}

// zone converts between UTC and s's writer time zone (see locktable.Zone):
// with one, the columns hold that zone's wall-clock time. SQL Server's own
// AT TIME ZONE knows Windows zone names only; the conversion needs none.
func zone(s dialects.Schema) locktable.Zone {
	return locktable.NewZone(s,
		func(expr, ms string) string { return plusMs(expr, ms) },
		func(wall time.Time) string {
			return "CAST('" + wall.Format("2006-01-02T15:04:05.000") + "' AS datetime2(3))"
		})
}

// Dialect is "sqlserver".
func (Builder) Dialect() string { return Name }

// MaxNameRunes is the name column's length in UTF-16 code units: 255 for
// the native table, and the width the presets are created with
// (dialects.Schema.PresetNameWidth: 64 for shedlock, 128 for
// sys_sched_lock). On the native table the engine stores FitName(name,
// MaxNameRunes) (see Builder.FitName), which fits it in that many code
// units; preset tables store names as they are.
func (Builder) MaxNameRunes(s dialects.Schema) int { return s.PresetNameWidth(nativeNameUnits) }

// FitName makes Builder a locktable.NameFitter: names are stored as
// FitName(name, limit) — measured in UTF-16 code units, never ending in a
// space, which SQL Server's comparisons would ignore.
func (Builder) FitName(name string, limit int) string { return FitName(name, limit) }

// output is the OUTPUT clause: the token, or 1 without a token column.
func output(s dialects.Schema) string {
	if s.TokenCol == "" {
		return "OUTPUT CAST(1 AS bigint)"
	}
	return "OUTPUT inserted." + s.TokenCol
}

// Acquire inserts the row, or takes over an expired one, with
// MERGE … WITH (HOLDLOCK): @p1 name, @p2 owner, @p3 at-most in ms.
// locked_at and until come from one clock reading, so until - locked_at
// is exactly at-most. A live row matches no clause and outputs nothing.
func (Builder) Acquire(s dialects.Schema) locktable.Stmt {
	z := zone(s)
	sets := []string{
		s.OwnerCol + " = src.owner",
		s.LockedAtCol + " = " + z.ToLocal("src.now"),
		s.UntilCol + " = " + z.ToLocal("src.until"),
	}
	cols := []string{s.NameCol, s.OwnerCol, s.LockedAtCol, s.UntilCol}
	vals := []string{"src.name", "src.owner", z.ToLocal("src.now"), z.ToLocal("src.until")}
	if s.TokenCol != "" {
		sets = append(sets, s.TokenCol+" = t."+s.TokenCol+" + 1")
		cols = append(cols, s.TokenCol)
		vals = append(vals, "1")
	}
	sql := "MERGE INTO " + s.Table + " WITH (HOLDLOCK) AS t\n" +
		"USING (SELECT @p1 AS name, @p2 AS owner, n.now, " + plusMs("n.now", "@p3") + " AS until FROM " + clockTable + ") AS src\n" +
		"ON t." + s.NameCol + " = src.name\n" +
		"WHEN MATCHED AND " + z.ToUTC("t."+s.UntilCol) + " <= src.now THEN UPDATE SET " + strings.Join(sets, ", ") + "\n" +
		"WHEN NOT MATCHED THEN INSERT (" + strings.Join(cols, ", ") + ") VALUES (" + strings.Join(vals, ", ") + ")\n" +
		output(s) + ";"
	return locktable.Stmt{
		SQL:    sql,
		Args:   []locktable.Arg{locktable.ArgName, locktable.ArgOwner, locktable.ArgAtMostMs},
		Result: locktable.ResultRow,
	}
}

// Refresh sets until = now + at-most on the owner's live row.
//
// The Builder is no locktable.BatchRefresher: each lease is renewed by its
// own Refresh. A batch form (UPDATE … FROM a VALUES list, OUTPUT the
// names) could not be run against a SQL Server here, and the offline
// simulator does not read a VALUES join, so it would ship unverified; the
// engine falls back to one statement per lease, as before.
func (Builder) Refresh(s dialects.Schema) locktable.Stmt {
	return ownedUpdate(s, s.UntilCol+" = "+zone(s).ToLocal(plusMs("n.now", "@p3")), locktable.ArgAtMostMs)
}

// Release sets until = max(locked_at + at-least, now) on the owner's live
// row.
func (Builder) Release(s dialects.Schema) locktable.Stmt {
	z := zone(s)
	atLeast := plusMs(z.ToUTC("t."+s.LockedAtCol), "@p3")
	return ownedUpdate(s, s.UntilCol+" = "+z.ToLocal("CASE WHEN "+atLeast+" > n.now THEN "+atLeast+" ELSE n.now END"), locktable.ArgAtLeastMs)
}

// ownedUpdate is the UPDATE behind Refresh and Release: @p1 name, @p2
// owner, @p3 the duration, @p4 the token (0 skips the check) when the
// schema has a token column; only a row whose lease is still running
// matches.
func ownedUpdate(s dialects.Schema, set string, duration locktable.Arg) locktable.Stmt {
	args := []locktable.Arg{locktable.ArgName, locktable.ArgOwner, duration}
	where := "t." + s.NameCol + " = @p1 AND t." + s.OwnerCol + " = @p2"
	if s.TokenCol != "" {
		where += " AND (t." + s.TokenCol + " = @p4 OR @p4 = 0)"
		args = append(args, locktable.ArgToken)
	}
	where += " AND " + zone(s).ToUTC("t."+s.UntilCol) + " > n.now"
	return locktable.Stmt{
		SQL:    "UPDATE t SET " + set + "\n" + output(s) + "\nFROM " + s.Table + " AS t CROSS JOIN " + clockTable + "\nWHERE " + where + ";",
		Args:   args,
		Result: locktable.ResultRow,
	}
}

// Expire sets until = now on a live row, whoever owns it.
func (Builder) Expire(s dialects.Schema) locktable.Stmt {
	return locktable.Stmt{
		SQL: "UPDATE t SET " + s.UntilCol + " = " + zone(s).ToLocal("n.now") + "\n" + output(s) + "\nFROM " + s.Table + " AS t CROSS JOIN " + clockTable + "\n" +
			"WHERE t." + s.NameCol + " = @p1 AND " + zone(s).ToUTC("t."+s.UntilCol) + " > n.now;",
		Args:   []locktable.Arg{locktable.ArgName},
		Result: locktable.ResultRow,
	}
}

// selectRow lists owner, token, locked_at, until and the database's now.
func selectRow(s dialects.Schema) string {
	token := "CAST(0 AS bigint)"
	if s.TokenCol != "" {
		token = "t." + s.TokenCol
	}
	return "t." + s.OwnerCol + ", " + token + ", " + epochMs("t."+s.LockedAtCol) + ", " + epochMs("t."+s.UntilCol) + ", " + epochMs("n.now")
}

// Inspect reads the row of @p1.
func (Builder) Inspect(s dialects.Schema) locktable.Stmt {
	return locktable.Stmt{
		SQL:    "SELECT " + selectRow(s) + "\nFROM " + s.Table + " AS t CROSS JOIN " + clockTable + "\nWHERE t." + s.NameCol + " = @p1;",
		Args:   []locktable.Arg{locktable.ArgName},
		Result: locktable.ResultRow,
	}
}

// List reads every row, ordered by name.
func (Builder) List(s dialects.Schema) locktable.Stmt {
	return locktable.Stmt{
		SQL:    "SELECT t." + s.NameCol + ", " + selectRow(s) + "\nFROM " + s.Table + " AS t CROSS JOIN " + clockTable + "\nORDER BY t." + s.NameCol + ";",
		Result: locktable.ResultRow,
	}
}

// Create creates the table unless OBJECT_ID finds it (SQL Server 2012 has
// no CREATE TABLE IF NOT EXISTS): the name as primary key (nvarchar(255)
// native, nvarchar(64) for shedlock, nvarchar(128) for sys_sched_lock), name
// and owner in the binary collation Latin1_General_100_BIN2, the owner as
// nvarchar(255), times as datetime2(3), and on the native table token
// bigint NOT NULL DEFAULT 0. ShedLock documents varchar columns; nvarchar
// keeps names outside the database's code page exact.
func (b Builder) Create(s dialects.Schema) string {
	cols := []string{
		s.NameCol + " nvarchar(" + strconv.Itoa(b.MaxNameRunes(s)) + ") COLLATE " + nameCollation + " NOT NULL",
		s.UntilCol + " datetime2(3) NOT NULL",
		s.LockedAtCol + " datetime2(3) NOT NULL",
		s.OwnerCol + " nvarchar(" + strconv.Itoa(ownerUnits) + ") COLLATE " + nameCollation + " NOT NULL",
	}
	if s.Preset == dialects.PresetSysSchedLock {
		// Its documented column order: lock_name, lock_owner, acquire_time, expire_time.
		cols[1], cols[3] = cols[3], cols[1]
	}
	if s.TokenCol != "" {
		cols = append(cols, s.TokenCol+" bigint NOT NULL DEFAULT 0")
	}
	cols = append(cols, "PRIMARY KEY ("+s.NameCol+")")
	return "IF OBJECT_ID(N'" + s.Table + "', N'U') IS NULL\nCREATE TABLE " + s.Table + " (\n  " + strings.Join(cols, ",\n  ") + "\n)"
}

// Drop drops the table when OBJECT_ID finds it (DROP TABLE IF EXISTS
// arrived in SQL Server 2016).
func (Builder) Drop(s dialects.Schema) string {
	return "IF OBJECT_ID(N'" + s.Table + "', N'U') IS NOT NULL\nDROP TABLE " + s.Table
}

// IsMissingTable reports error 208, "Invalid object name".
func (Builder) IsMissingTable(err error) bool { return hasNumber(err, errInvalidObjectName) }

// IsDuplicateKey implements locktable.DuplicateKeyer: errors 2627
// (PRIMARY KEY or UNIQUE constraint) and 2601 (unique index).
func (Builder) IsDuplicateKey(err error) bool {
	return hasNumber(err, errDuplicateKey, errDuplicateIndexKey)
}
