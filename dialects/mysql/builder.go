package mysql

import (
	"errors"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
)

// errNoSuchTable is ER_NO_SUCH_TABLE.
const errNoSuchTable = 1146

// SQL fragments for the database clock: UTC wall-clock time with
// milliseconds, constant within one statement.
const (
	sqlNow      = "UTC_TIMESTAMP(3)"
	sqlNowPlus  = "TIMESTAMPADD(MICROSECOND, ? * 1000, UTC_TIMESTAMP(3))"
	sqlEpochMs  = "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', %s) DIV 1000"
	nativeNames = 255 // VARCHAR(255) utf8mb4: 1020 bytes, within InnoDB's 3072-byte key limit
)

// Builder writes the lease-table SQL of the MySQL family. Every statement
// reports its outcome through the insert id (locktable.ResultInsertID): it
// calls LAST_INSERT_ID(expr) with the new token (1 without a token column)
// when it took effect and LAST_INSERT_ID(0), or nothing, when it did not.
// The server returns that value in the OK packet whatever the connection's
// CLIENT_FOUND_ROWS flag, so a refresh that changes nothing within the same
// millisecond still reports success, which rows-affected would not.
type Builder struct {
	// Collation is the collation of the name column in Create: a binary
	// one, so names differing in case or accents stay distinct locks.
	Collation string
}

var (
	_ locktable.Builder        = (*Builder)(nil)
	_ locktable.BatchRefresher = (*Builder)(nil)
)

// NewBuilder returns the Builder for info's server. The name column's
// collation is the binary NO PAD one where the server has it (MariaDB
// 10.2.2+: utf8mb4_nopad_bin; MySQL 8.0.17+: utf8mb4_0900_bin), so even
// trailing spaces tell names apart, else utf8mb4_bin (PAD SPACE: "a" and
// "a " are one lock).
func NewBuilder(info dialects.Info) *Builder {
	switch {
	case info.Product == dialects.ProductMariaDB && versionAtLeast(info.Version, 10, 2, 2):
		return &Builder{Collation: "utf8mb4_nopad_bin"}
	case info.Product == dialects.ProductMySQL && versionAtLeast(info.Version, 8, 0, 17):
		return &Builder{Collation: "utf8mb4_0900_bin"}
	default:
		return &Builder{Collation: "utf8mb4_bin"}
	}
}

// zone converts between UTC and s's writer time zone (see locktable.Zone):
// the lease arithmetic stays on UTC_TIMESTAMP(3), and with a writer time
// zone the columns hold that zone's wall-clock time.
func zone(s dialects.Schema) locktable.Zone {
	return locktable.NewZone(s,
		func(expr, ms string) string { return "TIMESTAMPADD(MICROSECOND, " + ms + " * 1000, " + expr + ")" },
		func(wall time.Time) string { return "TIMESTAMP '" + wall.Format("2006-01-02 15:04:05.000") + "'" })
}

// Dialect implements locktable.Builder.
func (b *Builder) Dialect() string { return Name }

// MaxNameRunes is 255 for the native table, and the width the presets
// are created with (dialects.Schema.PresetNameWidth: 64 for shedlock, 128
// for sys_sched_lock).
func (b *Builder) MaxNameRunes(s dialects.Schema) int { return s.PresetNameWidth(nativeNames) }

// Acquire is one INSERT … ON DUPLICATE KEY UPDATE. A new name inserts its
// row with token LAST_INSERT_ID(1). On an existing row every assignment is
// IF(until <= now, new value, old value); the lease-end column is assigned
// last because MySQL evaluates the assignments left to right and later ones
// see the new values of earlier ones, so each condition still reads the old
// lease end. The token assignment sets the insert id to token + 1 when the
// lease had expired and to 0 when it is live; without a token column the
// owner assignment sets it to the condition itself (1 or 0).
//
// VALUES(col) is deprecated since MySQL 8.0.20 in favour of a row alias,
// but still works there and is the only form MariaDB and TiDB accept.
func (b *Builder) Acquire(s dialects.Schema) locktable.Stmt {
	z := zone(s)
	expired := z.ToUTC(s.UntilCol) + " <= " + sqlNow
	takeOver := func(col string) string {
		return col + " = IF(" + expired + ", VALUES(" + col + "), " + col + ")"
	}
	cols := []string{s.NameCol, s.OwnerCol, s.LockedAtCol, s.UntilCol}
	vals := []string{"?", "?", z.ToLocal(sqlNow), wholeUp(s, z.ToLocal(sqlNowPlus))}
	var updates []string
	if s.TokenCol != "" {
		cols = append(cols, s.TokenCol)
		vals = append(vals, "LAST_INSERT_ID(1)")
		updates = append(updates,
			s.TokenCol+" = IF("+expired+", LAST_INSERT_ID("+s.TokenCol+" + 1), "+s.TokenCol+" + LAST_INSERT_ID(0) * 0)",
			takeOver(s.OwnerCol))
	} else {
		vals[1] = "IF(LAST_INSERT_ID(1), ?, '')"
		updates = append(updates,
			s.OwnerCol+" = IF(LAST_INSERT_ID("+expired+"), VALUES("+s.OwnerCol+"), "+s.OwnerCol+")")
	}
	updates = append(updates, takeOver(s.LockedAtCol), takeOver(s.UntilCol))
	sql := "INSERT INTO " + s.Table + " (" + strings.Join(cols, ", ") + ") VALUES (" + strings.Join(vals, ", ") +
		") ON DUPLICATE KEY UPDATE " + strings.Join(updates, ", ")
	return locktable.Stmt{
		SQL:    sql,
		Args:   append([]locktable.Arg{locktable.ArgName, locktable.ArgOwner}, locktable.Repeat(z.Uses(), locktable.ArgAtMostMs)...),
		Result: locktable.ResultInsertID,
	}
}

// Refresh sets until = now + at-most on the owner's live row.
// (Acquire, Refresh and Release write the lease end through wholeUp.)
func (b *Builder) Refresh(s dialects.Schema) locktable.Stmt {
	set, args := refreshSet(s)
	return b.ownerUpdate(s, set, args...)
}

// refreshSet is the SET list of Refresh and RefreshBatch and its
// arguments.
func refreshSet(s dialects.Schema) (string, []locktable.Arg) {
	z := zone(s)
	return s.UntilCol + " = " + wholeUp(s, z.ToLocal(sqlNowPlus)), locktable.Repeat(z.Uses(), locktable.ArgAtMostMs)
}

// batchSize is the most leases one RefreshBatch statement renews: 3,000
// placeholders and a statement of some 100 kB, well within
// max_allowed_packet and the 65,535 placeholders of a prepared statement.
const batchSize = 1000

// MaxBatch is 1000 leases per RefreshBatch statement.
func (b *Builder) MaxBatch() int { return batchSize }

// RefreshBatch renews the owner's live rows among n names, as Refresh
// renews one: name IN (…) finds the rows by the primary key and
// (name, token) IN ((…), …) keeps each row's token check; the outcome is
// the row count (locktable.ResultRowsAffected), as UPDATE has no
// RETURNING in the MySQL family. Every placeholder is compared with a
// column, so the column's collation decides, as in Refresh.
func (b *Builder) RefreshBatch(s dialects.Schema, n int) locktable.Stmt {
	set, args := refreshSet(s)
	where := s.OwnerCol + " = ? AND " + s.NameCol + " IN (" + marks(n, "?") + ")"
	args = append(args, locktable.ArgOwner, locktable.ArgNameList)
	if s.TokenCol != "" {
		where += " AND (" + s.NameCol + ", " + s.TokenCol + ") IN (" + marks(n, "(?, ?)") + ")"
		args = append(args, locktable.ArgNameTokenList)
	}
	return locktable.Stmt{
		SQL:    "UPDATE " + s.Table + " SET " + set + " WHERE " + where + " AND " + zone(s).ToUTC(s.UntilCol) + " > " + sqlNow,
		Args:   args,
		Result: locktable.ResultRowsAffected,
	}
}

// marks is n copies of mark, comma-separated.
func marks(n int, mark string) string {
	return strings.TrimSuffix(strings.Repeat(mark+", ", n), ", ")
}

// Release sets until = GREATEST(locked_at + at-least, now) on the owner's
// live row.
func (b *Builder) Release(s dialects.Schema) locktable.Stmt {
	z := zone(s)
	until := s.UntilCol + " = " + wholeUp(s, z.ToLocal("GREATEST(TIMESTAMPADD(MICROSECOND, ? * 1000, "+z.ToUTC(s.LockedAtCol)+"), "+sqlNow+")"))
	return b.ownerUpdate(s, until, locktable.Repeat(z.Uses(), locktable.ArgAtLeastMs)...)
}

// Expire ends any owner's live lease now (administrative force-unlock).
func (b *Builder) Expire(s dialects.Schema) locktable.Stmt {
	return locktable.Stmt{
		SQL: "UPDATE " + s.Table + " SET " + s.UntilCol + " = " + zone(s).ToLocal(sqlNow) + ", " + matchedMark(s) +
			" WHERE " + s.NameCol + " = ? AND " + zone(s).ToUTC(s.UntilCol) + " > " + sqlNow,
		Args:   []locktable.Arg{locktable.ArgName},
		Result: locktable.ResultInsertID,
	}
}

// ownerUpdate is UPDATE … SET set, <mark> WHERE the row is name's, owned by
// owner (and token, unless 0) and live.
func (b *Builder) ownerUpdate(s dialects.Schema, set string, setArgs ...locktable.Arg) locktable.Stmt {
	where := s.NameCol + " = ? AND " + s.OwnerCol + " = ?"
	args := append(setArgs, locktable.ArgName, locktable.ArgOwner)
	if s.TokenCol != "" {
		where += " AND (" + s.TokenCol + " = ? OR ? = 0)"
		args = append(args, locktable.ArgToken, locktable.ArgToken)
	}
	return locktable.Stmt{
		SQL:    "UPDATE " + s.Table + " SET " + set + ", " + matchedMark(s) + " WHERE " + where + " AND " + zone(s).ToUTC(s.UntilCol) + " > " + sqlNow,
		Args:   args,
		Result: locktable.ResultInsertID,
	}
}

// matchedMark is an assignment that leaves the row as it is and sets the
// insert id for every row the UPDATE matched: to the token, or to 1 without
// a token column. An UPDATE that matches no row never evaluates it and
// reports insert id 0.
func matchedMark(s dialects.Schema) string {
	if s.TokenCol != "" {
		return s.TokenCol + " = LAST_INSERT_ID(" + s.TokenCol + ")"
	}
	return s.OwnerCol + " = IF(LAST_INSERT_ID(1), " + s.OwnerCol + ", " + s.OwnerCol + ")"
}

// Inspect selects owner, token, locked_at, until and now of one row, times
// as milliseconds since the epoch read from the UTC wall-clock values (so
// ShedLock's TIMESTAMP columns, written with UTC_TIMESTAMP(3), read back
// right in any session time zone).
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
	token := "0"
	if s.TokenCol != "" {
		token = s.TokenCol
	}
	return strings.Join([]string{s.OwnerCol, token, epochMs(s.LockedAtCol), epochMs(s.UntilCol), epochMs(sqlNow)}, ", ")
}

func epochMs(expr string) string { return strings.Replace(sqlEpochMs, "%s", expr, 1) }

// IsMissingTable reports a server error 1146 (ER_NO_SUCH_TABLE).
func (b *Builder) IsMissingTable(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == errNoSuchTable
}
