package postgres

import (
	"strings"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
)

var (
	_ locktable.RowDeleter         = Builder{}
	_ locktable.NameColumnBuilder  = Builder{}
	_ locktable.ExactRemedyBuilder = Builder{}
)

// literal is s as a string literal; s is an identifier checked by
// dialects.Table.Schema, so it holds no quote.
func literal(s string) string { return "'" + s + "'" }

// NameColumn reads the name column from pg_attribute: the table is
// resolved by a regclass cast, as the lease statements resolve it (search
// path; a missing table is SQLSTATE 42P01), and the column by its folded
// lower-case name. The width is varchar(n)'s or char(n)'s n (typmod - 4),
// 0 for text; the collation is the column's, "default" followed by the
// database's LC_COLLATE, and " (nondeterministic)" for an ICU collation
// that compares case-insensitively (read through to_jsonb, so that servers
// before PostgreSQL 12, which lack collisdeterministic, read it as
// deterministic).
func (Builder) NameColumn(s dialects.Schema) string {
	return "SELECT CASE WHEN a.atttypmod > 4 AND ty.typname IN ('varchar', 'bpchar') THEN a.atttypmod - 4 ELSE 0 END,\n" +
		"       '" + dialects.NameUnitCharacters + "',\n" +
		"       COALESCE(CASE WHEN co.collname = 'default'\n" +
		"                     THEN 'default (' || (SELECT d.datcollate::text FROM pg_database AS d WHERE d.datname = current_database()) || ')'\n" +
		"                     ELSE co.collname::text END\n" +
		"                || CASE WHEN to_jsonb(co) ->> 'collisdeterministic' = 'false' THEN ' (nondeterministic)' ELSE '' END, ''),\n" +
		"       format_type(a.atttypid, a.atttypmod)\n" +
		"FROM pg_attribute AS a\n" +
		"JOIN pg_type AS ty ON ty.oid = a.atttypid\n" +
		"LEFT JOIN pg_collation AS co ON co.oid = a.attcollation\n" +
		"WHERE a.attrelid = " + literal(s.Table) + "::regclass AND a.attname = " + literal(strings.ToLower(s.NameCol)) + " AND NOT a.attisdropped"
}

// ExactRemedy gives the name column the "C" collation, which compares
// bytes: a nondeterministic (case-insensitive) ICU collation, or a citext
// column, makes two names one lock.
func (Builder) ExactRemedy(s dialects.Schema, col dialects.NameColumn) string {
	typ := col.Type
	if typ == "" || strings.Contains(typ, "citext") {
		typ = "text"
	}
	return "ALTER TABLE " + s.Table + " ALTER COLUMN " + s.NameCol + " TYPE " + typ + ` COLLATE "C"`
}

// ReleaseDelete deletes the owner's live row once at-least has passed
// (locked_at + at-least <= now).
func (Builder) ReleaseDelete(s dialects.Schema) locktable.Stmt {
	z := zone(s)
	return deleteStmt(s, "t."+s.NameCol+" = $1::text AND t."+s.OwnerCol+" = $2::text AND "+z.ToUTC("t."+s.UntilCol)+" > "+now+
		" AND "+z.ToUTC("t."+s.LockedAtCol)+" + $3::bigint * interval '1 millisecond' <= "+now,
		locktable.ArgName, locktable.ArgOwner, locktable.ArgAtLeastMs)
}

// Sweep deletes the owner's row once its lease has ended.
func (Builder) Sweep(s dialects.Schema) locktable.Stmt {
	return deleteStmt(s, "t."+s.NameCol+" = $1::text AND t."+s.OwnerCol+" = $2::text AND "+zone(s).ToUTC("t."+s.UntilCol)+" <= "+now,
		locktable.ArgName, locktable.ArgOwner)
}

// Delete deletes the row of the name, whoever holds it.
func (Builder) Delete(s dialects.Schema) locktable.Stmt {
	return deleteStmt(s, "t."+s.NameCol+" = $1::text", locktable.ArgName)
}

// deleteStmt is DELETE … WHERE where RETURNING 1.
func deleteStmt(s dialects.Schema, where string, args ...locktable.Arg) locktable.Stmt {
	return locktable.Stmt{
		SQL:    "DELETE FROM " + s.Table + " AS t\nWHERE " + where + "\nRETURNING 1::bigint",
		Args:   args,
		Result: locktable.ResultRow,
	}
}
