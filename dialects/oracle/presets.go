package oracle

import (
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/oralike"
	"github.com/schedlock/schedlock/dialects/locktable"
)

var (
	_ locktable.RowDeleter        = (*Builder)(nil)
	_ locktable.NameColumnBuilder = (*Builder)(nil)
)

// NameColumn reads the name column from ALL_TAB_COLUMNS, in the table's
// schema or, for an unqualified name, the session's current schema;
// unquoted identifiers are stored upper case. The width is in characters
// for a column declared with CHAR length semantics and in bytes for one
// declared with BYTE semantics (the default NLS_LENGTH_SEMANTICS), whose
// limit a multi-byte name reaches sooner. Oracle compares names in binary
// unless a session asks otherwise, so no collation is reported.
func (b *Builder) NameColumn(s dialects.Schema) string {
	return "SELECT CASE CHAR_USED WHEN 'B' THEN DATA_LENGTH ELSE CHAR_LENGTH END," +
		" CASE CHAR_USED WHEN 'B' THEN '" + dialects.NameUnitBytes + "' ELSE '" + dialects.NameUnitCharacters + "' END," +
		" NULL," +
		" DATA_TYPE || '(' || CASE CHAR_USED WHEN 'B' THEN DATA_LENGTH || ' BYTE' ELSE CHAR_LENGTH || ' CHAR' END || ')'" +
		oralike.NameColumnFrom(s)
}

// ReleaseDelete deletes the owner's live row once at-least has passed
// (locked_at + at-least <= now).
func (b *Builder) ReleaseDelete(s dialects.Schema) locktable.Stmt {
	z := zone(s)
	return deleteStmt(s, s.NameCol+" = ? AND "+s.OwnerCol+" = ? AND "+z.ToUTC(s.UntilCol)+" > "+sqlNow+
		" AND "+z.ToUTC(s.LockedAtCol)+" + NUMTODSINTERVAL(? / 1000, 'SECOND') <= "+sqlNow,
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

// deleteStmt is DELETE … WHERE where, its placeholders numbered :1, :2, …;
// its outcome is its row count.
func deleteStmt(s dialects.Schema, where string, args ...locktable.Arg) locktable.Stmt {
	return locktable.Stmt{SQL: positional("DELETE FROM " + s.Table + " WHERE " + where), Args: args, Result: locktable.ResultRowsAffected}
}
