package dameng

import (
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/oralike"
	"github.com/schedlock/schedlock/dialects/locktable"
)

var (
	_ locktable.RowDeleter        = (*Builder)(nil)
	_ locktable.NameColumnBuilder = (*Builder)(nil)
)

// NameColumn reads the name column from ALL_TAB_COLUMNS, DM8's
// Oracle-compatible view, in the table's schema or, for an unqualified
// name, the session's current schema; unquoted identifiers are stored
// upper case. The width is in characters for a column declared with CHAR
// and in bytes otherwise (DM's VARCHAR(n) counts bytes unless the database
// was initialised with LENGTH_IN_CHAR=1). [U: the view's CHAR_USED and
// CHAR_LENGTH columns and SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA') are
// those of Oracle, which DM8 documents as compatible; unverified on a
// live server.]
func (b *Builder) NameColumn(s dialects.Schema) string {
	return "SELECT CAST(CASE CHAR_USED WHEN 'C' THEN CHAR_LENGTH ELSE DATA_LENGTH END AS BIGINT)," +
		" CASE CHAR_USED WHEN 'C' THEN '" + dialects.NameUnitCharacters + "' ELSE '" + dialects.NameUnitBytes + "' END," +
		" CAST(NULL AS VARCHAR(1))," +
		" DATA_TYPE" +
		oralike.NameColumnFrom(s)
}

// ReleaseDelete deletes the owner's live row once at-least has passed
// (locked_at + at-least <= now).
func (b *Builder) ReleaseDelete(s dialects.Schema) locktable.Stmt {
	z := zone(s)
	return deleteStmt(s, s.NameCol+" = ? AND "+s.OwnerCol+" = ? AND "+z.ToUTC(s.UntilCol)+" > "+sqlNow+
		" AND "+plusMs(z.ToUTC(s.LockedAtCol), "?")+" <= "+sqlNow,
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

// deleteStmt is DELETE … WHERE where; its outcome is its row count.
func deleteStmt(s dialects.Schema, where string, args ...locktable.Arg) locktable.Stmt {
	return locktable.Stmt{SQL: "DELETE FROM " + s.Table + " WHERE " + where, Args: args, Result: locktable.ResultRowsAffected}
}
