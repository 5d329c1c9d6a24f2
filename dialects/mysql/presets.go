package mysql

import (
	"strconv"
	"strings"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
)

var (
	_ locktable.RowDeleter         = (*Builder)(nil)
	_ locktable.NameColumnBuilder  = (*Builder)(nil)
	_ locktable.ExactRemedyBuilder = (*Builder)(nil)
)

// literal is s as a string literal; s is an identifier checked by
// dialects.Table.Schema, so it holds no quote.
func literal(s string) string { return "'" + s + "'" }

// NameColumn reads the name column from information_schema.COLUMNS, in the
// table's schema or, for an unqualified name, DATABASE(): its width in
// characters, collation and COLUMN_TYPE.
func (b *Builder) NameColumn(s dialects.Schema) string {
	schema, table := "DATABASE()", s.Table
	if i := strings.IndexByte(s.Table, '.'); i >= 0 {
		schema, table = literal(s.Table[:i]), s.Table[i+1:]
	}
	return "SELECT COALESCE(CHARACTER_MAXIMUM_LENGTH, 0), '" + dialects.NameUnitCharacters + "', COALESCE(COLLATION_NAME, ''), COLUMN_TYPE" +
		" FROM information_schema.COLUMNS" +
		" WHERE TABLE_SCHEMA = " + schema + " AND TABLE_NAME = " + literal(table) + " AND COLUMN_NAME = " + literal(s.NameCol)
}

// ExactRemedy gives the name column the binary collation schedlock's own
// tables use (b.Collation: utf8mb4_nopad_bin on MariaDB 10.2.2+,
// utf8mb4_0900_bin on MySQL 8.0.17+, else utf8mb4_bin), which tells
// names apart by case, accents and trailing spaces; MODIFY keeps the type.
func (b *Builder) ExactRemedy(s dialects.Schema, col dialects.NameColumn) string {
	typ := col.Type
	if typ == "" {
		typ = "VARCHAR(" + strconv.Itoa(col.Width) + ")"
	}
	return "ALTER TABLE " + s.Table + " MODIFY " + s.NameCol + " " + typ + " CHARACTER SET utf8mb4 COLLATE " + b.Collation + " NOT NULL"
}

// ReleaseDelete deletes the owner's live row once at-least has passed
// (locked_at + at-least <= now). Its outcome is its row count, which
// counts deleted rows whatever the connection's CLIENT_FOUND_ROWS.
func (b *Builder) ReleaseDelete(s dialects.Schema) locktable.Stmt {
	z := zone(s)
	return deleteStmt(s, s.NameCol+" = ? AND "+s.OwnerCol+" = ? AND "+z.ToUTC(s.UntilCol)+" > "+sqlNow+
		" AND TIMESTAMPADD(MICROSECOND, ? * 1000, "+z.ToUTC(s.LockedAtCol)+") <= "+sqlNow,
		locktable.ArgName, locktable.ArgOwner, locktable.ArgAtLeastMs)
}

// Sweep deletes the owner's row once its lease has ended.
func (b *Builder) Sweep(s dialects.Schema) locktable.Stmt {
	return deleteStmt(s, s.NameCol+" = ? AND "+s.OwnerCol+" = ? AND "+zone(s).ToUTC(s.UntilCol)+" <= "+sqlNow,
		locktable.ArgName, locktable.ArgOwner)
}

// Delete deletes the row of the name, whoever holds it.
func (b *Builder) Delete(s dialects.Schema) locktable.Stmt {
	return deleteStmt(s, s.NameCol+" = ?", locktable.ArgName)
}

func deleteStmt(s dialects.Schema, where string, args ...locktable.Arg) locktable.Stmt {
	return locktable.Stmt{SQL: "DELETE FROM " + s.Table + " WHERE " + where, Args: args, Result: locktable.ResultRowsAffected}
}
