package sqlite

import (
	"strconv"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
)

// Builder writes SQLite's lease-table SQL (SQLite 3.35+ for RETURNING).
//
// Times are stored as TEXT "YYYY-MM-DD HH:MM:SS.SSS" in UTC, which sorts
// as it compares, and computed by strftime from 'now', which SQLite keeps
// stable within one statement. Durations are bound in milliseconds and
// added with an "N.NNN seconds" modifier, which SQLite applies in whole
// milliseconds. Inspect and List report times as integer milliseconds
// since the Unix epoch.
type Builder struct{}

var (
	_ locktable.Builder        = Builder{}
	_ locktable.BatchRefresher = Builder{}
)

// timeFormat is the strftime format of every stored time.
const timeFormat = `'%Y-%m-%d %H:%M:%f'`

// nowSQL is the database's now as stored text.
const nowSQL = `strftime(` + timeFormat + `, 'now')`

// plusMs is base plus a bound number of milliseconds, as stored text.
func plusMs(base string) string {
	return `strftime(` + timeFormat + `, ` + base + `, (? / 1000.0) || ' seconds')`
}

// epochMs is the stored time expr as integer milliseconds since the epoch.
func epochMs(expr string) string {
	return `CAST(ROUND((julianday(` + expr + `) - 2440587.5) * 86400000) AS INTEGER)`
}

// unqualified is the table name without its schema, for column references.
func unqualified(table string) string {
	if i := strings.LastIndexByte(table, '.'); i >= 0 {
		return table[i+1:]
	}
	return table
}

// zone converts between UTC and s's writer time zone (see locktable.Zone):
// with one, the columns hold that zone's wall-clock time as the same text.
func zone(s dialects.Schema) locktable.Zone {
	return locktable.NewZone(s,
		func(expr, ms string) string {
			return `strftime(` + timeFormat + `, ` + expr + `, (` + ms + ` / 1000.0) || ' seconds')`
		},
		func(wall time.Time) string { return "'" + wall.Format("2006-01-02 15:04:05.000") + "'" })
}

// Dialect is "sqlite".
func (Builder) Dialect() string { return Name }

// MaxNameRunes is 1024 for the native table, and the width the presets
// are created with (dialects.Schema.PresetNameWidth: 64 for shedlock, 128
// for sys_sched_lock). SQLite itself does not enforce a length; preset
// tables are held to their declared one (NameColumn).
func (b Builder) MaxNameRunes(s dialects.Schema) int { return s.PresetNameWidth(1024) }

// Acquire upserts the row: a new name is inserted with token 1, an expired
// row is taken over with token + 1, a live row is left alone and RETURNING
// yields no row.
func (Builder) Acquire(s dialects.Schema) locktable.Stmt {
	t := unqualified(s.Table)
	z := zone(s)
	cols := []string{s.NameCol, s.OwnerCol, s.LockedAtCol, s.UntilCol}
	vals := []string{"?", "?", z.ToLocal(nowSQL), z.ToLocal(plusMs("'now'"))}
	sets := []string{
		s.OwnerCol + " = excluded." + s.OwnerCol,
		s.LockedAtCol + " = excluded." + s.LockedAtCol,
		s.UntilCol + " = excluded." + s.UntilCol,
	}
	returning := "1"
	if s.TokenCol != "" {
		cols = append(cols, s.TokenCol)
		vals = append(vals, "1")
		sets = append(sets, s.TokenCol+" = "+t+"."+s.TokenCol+" + 1")
		returning = s.TokenCol
	}
	sql := "INSERT INTO " + s.Table + " (" + strings.Join(cols, ", ") + ")\n" +
		"VALUES (" + strings.Join(vals, ", ") + ")\n" +
		"ON CONFLICT (" + s.NameCol + ") DO UPDATE SET " + strings.Join(sets, ", ") + "\n" +
		"WHERE " + z.ToUTC(t+"."+s.UntilCol) + " <= " + nowSQL + "\n" +
		"RETURNING " + returning
	return locktable.Stmt{
		SQL:    sql,
		Args:   append([]locktable.Arg{locktable.ArgName, locktable.ArgOwner}, locktable.Repeat(z.Uses(), locktable.ArgAtMostMs)...),
		Result: locktable.ResultRow,
	}
}

// ownerMatch is the WHERE clause that finds the live row of name held by
// owner (and token, unless the bound token is 0), and its arguments.
func ownerMatch(s dialects.Schema) (string, []locktable.Arg) {
	where := "WHERE " + s.NameCol + " = ? AND " + s.OwnerCol + " = ?"
	args := []locktable.Arg{locktable.ArgName, locktable.ArgOwner}
	if s.TokenCol != "" {
		where += " AND (" + s.TokenCol + " = ? OR ? = 0)"
		args = append(args, locktable.ArgToken, locktable.ArgToken)
	}
	where += " AND " + zone(s).ToUTC(s.UntilCol) + " > " + nowSQL
	return where, args
}

func returning(s dialects.Schema) string {
	if s.TokenCol != "" {
		return "RETURNING " + s.TokenCol
	}
	return "RETURNING 1"
}

// Refresh moves the lease end of the owner's live row to now + at-most.
func (Builder) Refresh(s dialects.Schema) locktable.Stmt {
	where, args := ownerMatch(s)
	z := zone(s)
	return locktable.Stmt{
		SQL: "UPDATE " + s.Table + " SET " + s.UntilCol + " = " + z.ToLocal(plusMs("'now'")) + "\n" +
			where + "\n" + returning(s),
		Args:   append(locktable.Repeat(z.Uses(), locktable.ArgAtMostMs), args...),
		Result: locktable.ResultRow,
	}
}

// MaxBatch is 1000 leases per RefreshBatch statement.
func (Builder) MaxBatch() int { return 1000 }

// RefreshBatch renews the owner's live rows among the bound pairs, as
// Refresh renews one: the pairs come as one JSON text [[name, token], …]
// read by json_each, joined to the table by UPDATE … FROM (SQLite 3.33+),
// each row checked for its own token; RETURNING gives the names renewed.
func (Builder) RefreshBatch(s dialects.Schema, _ int) locktable.Stmt {
	t := unqualified(s.Table)
	z := zone(s)
	where := "WHERE " + t + "." + s.NameCol + " = b.n AND " + t + "." + s.OwnerCol + " = ?"
	if s.TokenCol != "" {
		where += " AND " + t + "." + s.TokenCol + " = b.k"
	}
	where += " AND " + z.ToUTC(t+"."+s.UntilCol) + " > " + nowSQL
	return locktable.Stmt{
		SQL: "UPDATE " + s.Table + " SET " + s.UntilCol + " = " + z.ToLocal(plusMs("'now'")) + "\n" +
			"FROM (SELECT json_extract(value, '$[0]') AS n, json_extract(value, '$[1]') AS k FROM json_each(?)) AS b\n" +
			where + "\nRETURNING " + s.NameCol,
		Args:   append(locktable.Repeat(z.Uses(), locktable.ArgAtMostMs), locktable.ArgNameTokenJSON, locktable.ArgOwner),
		Result: locktable.ResultRow,
	}
}

// Release moves the lease end of the owner's live row to the later of
// locked-at + at-least and now (text comparison, which orders these times).
func (Builder) Release(s dialects.Schema) locktable.Stmt {
	where, args := ownerMatch(s)
	z := zone(s)
	return locktable.Stmt{
		SQL: "UPDATE " + s.Table + " SET " + s.UntilCol + " = " + z.ToLocal("max("+plusMs(z.ToUTC(s.LockedAtCol))+", "+nowSQL+")") + "\n" +
			where + "\n" + returning(s),
		Args:   append(locktable.Repeat(z.Uses(), locktable.ArgAtLeastMs), args...),
		Result: locktable.ResultRow,
	}
}

// Expire ends a live lease now, whoever holds it.
func (Builder) Expire(s dialects.Schema) locktable.Stmt {
	return locktable.Stmt{
		SQL: "UPDATE " + s.Table + " SET " + s.UntilCol + " = " + zone(s).ToLocal(nowSQL) + "\n" +
			"WHERE " + s.NameCol + " = ? AND " + zone(s).ToUTC(s.UntilCol) + " > " + nowSQL,
		Args:   []locktable.Arg{locktable.ArgName},
		Result: locktable.ResultRowsAffected,
	}
}

// rowColumns is owner, token, locked_at, until and now as Inspect and List
// report them.
func rowColumns(s dialects.Schema) string {
	token := "0"
	if s.TokenCol != "" {
		token = s.TokenCol
	}
	return s.OwnerCol + ", " + token + ",\n" +
		"       " + epochMs(s.LockedAtCol) + ",\n" +
		"       " + epochMs(s.UntilCol) + ",\n" +
		"       " + epochMs("'now'")
}

// Inspect reads one row by name.
func (Builder) Inspect(s dialects.Schema) locktable.Stmt {
	return locktable.Stmt{
		SQL:  "SELECT " + rowColumns(s) + "\nFROM " + s.Table + " WHERE " + s.NameCol + " = ?",
		Args: []locktable.Arg{locktable.ArgName},
	}
}

// List reads every row, ordered by name.
func (Builder) List(s dialects.Schema) locktable.Stmt {
	return locktable.Stmt{
		SQL: "SELECT " + s.NameCol + ", " + rowColumns(s) + "\nFROM " + s.Table + " ORDER BY " + s.NameCol,
	}
}

// Create is CREATE TABLE IF NOT EXISTS with the preset's column order. The
// native table has TEXT names and a token; the shedlock and sys_sched_lock
// presets declare VARCHAR(64) (ShedLock's) or VARCHAR(128) names and
// VARCHAR(255) owners, which SQLite stores as TEXT.
func (b Builder) Create(s dialects.Schema) string {
	nameType, ownerType := "VARCHAR("+strconv.Itoa(b.MaxNameRunes(s))+")", "VARCHAR(255)"
	if s.Preset == dialects.PresetSchedlock {
		nameType, ownerType = "TEXT", "TEXT"
	}
	name := s.NameCol + " " + nameType + " NOT NULL PRIMARY KEY"
	owner := s.OwnerCol + " " + ownerType + " NOT NULL"
	lockedAt := s.LockedAtCol + " TEXT NOT NULL"
	until := s.UntilCol + " TEXT NOT NULL"
	cols := []string{name, until, lockedAt, owner}
	if s.Preset == dialects.PresetSysSchedLock {
		cols = []string{name, owner, lockedAt, until}
	}
	if s.TokenCol != "" {
		cols = append(cols, s.TokenCol+" INTEGER NOT NULL DEFAULT 0")
	}
	return "CREATE TABLE IF NOT EXISTS " + s.Table + " (\n    " + strings.Join(cols, ",\n    ") + "\n)"
}

// IsMissingTable reports SQLite's "no such table" error.
func (Builder) IsMissingTable(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no such table")
}
