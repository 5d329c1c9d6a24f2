package sqlite

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

// NameColumn reads the name column with PRAGMA table_info: its declared
// type and the n of a declared "VARCHAR(n)" (0 for TEXT; SQLite stores any
// length, so n is what the table's other readers were promised), and from
// PRAGMA index_xinfo of the primary key the collation the key compares
// names with (BINARY unless the column says otherwise).
func (Builder) NameColumn(s dialects.Schema) string {
	args := "'" + s.Table + "'"
	if i := strings.IndexByte(s.Table, '.'); i >= 0 {
		args = "'" + s.Table[i+1:] + "', '" + s.Table[:i] + "'"
	}
	xinfoSchema := ""
	if i := strings.IndexByte(s.Table, '.'); i >= 0 {
		xinfoSchema = ", '" + s.Table[:i] + "'"
	}
	return "SELECT CAST(substr(c.type, instr(c.type, '(') + 1) AS INTEGER), '" + dialects.NameUnitCharacters + "',\n" +
		"       COALESCE((SELECT x.coll FROM pragma_index_list(" + args + ") AS il, pragma_index_xinfo(il.name" + xinfoSchema + ") AS x\n" +
		"                 WHERE il.origin = 'pk' AND x.name = c.name), ''),\n" +
		"       c.type\n" +
		"FROM pragma_table_info(" + args + ") AS c WHERE c.name = '" + s.NameCol + "'"
}

// ExactRemedy: SQLite cannot change a column's collation in place.
func (Builder) ExactRemedy(s dialects.Schema, col dialects.NameColumn) string {
	return "create " + s.Table + " again with " + s.NameCol + " " + col.Type + " COLLATE BINARY and copy its rows over (SQLite cannot change a column's collation in place)"
}

// ReleaseDelete deletes the owner's live row once at-least has passed
// (locked_at + at-least <= now, compared as the stored text).
func (Builder) ReleaseDelete(s dialects.Schema) locktable.Stmt {
	z := zone(s)
	return deleteStmt(s, s.NameCol+" = ? AND "+s.OwnerCol+" = ? AND "+z.ToUTC(s.UntilCol)+" > "+nowSQL+
		" AND "+plusMs(z.ToUTC(s.LockedAtCol))+" <= "+nowSQL,
		locktable.ArgName, locktable.ArgOwner, locktable.ArgAtLeastMs)
}

// Sweep deletes the owner's row once its lease has ended.
func (Builder) Sweep(s dialects.Schema) locktable.Stmt {
	return deleteStmt(s, s.NameCol+" = ? AND "+s.OwnerCol+" = ? AND "+zone(s).ToUTC(s.UntilCol)+" <= "+nowSQL,
		locktable.ArgName, locktable.ArgOwner)
}

// Delete deletes the row of the name, whoever holds it.
func (Builder) Delete(s dialects.Schema) locktable.Stmt {
	return deleteStmt(s, s.NameCol+" = ?", locktable.ArgName)
}

func deleteStmt(s dialects.Schema, where string, args ...locktable.Arg) locktable.Stmt {
	return locktable.Stmt{SQL: "DELETE FROM " + s.Table + "\nWHERE " + where + "\nRETURNING 1", Args: args, Result: locktable.ResultRow}
}
