package sqlserver

import (
	"strconv"
	"strings"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
)

var (
	_ locktable.VerbatimNameChecker = Builder{}
	_ locktable.RowDeleter          = Builder{}
	_ locktable.NameColumnBuilder   = Builder{}
	_ locktable.ExactRemedyBuilder  = Builder{}
)

// NameColumn reads the name column from sys.columns, the table resolved
// by OBJECT_ID as the lease statements resolve it (default schema): an
// nchar or nvarchar column's width in UTF-16 code units, any other's in
// bytes (max_length; 0 for (max)), its collation and declared type.
func (Builder) NameColumn(s dialects.Schema) string {
	units := "(CASE WHEN ty.name IN (N'nchar', N'nvarchar') THEN c.max_length / 2 ELSE c.max_length END)"
	return "SELECT CASE WHEN c.max_length < 0 THEN 0 ELSE " + units + " END,\n" +
		"       CASE WHEN ty.name IN (N'nchar', N'nvarchar') THEN N'" + dialects.NameUnitUTF16 + "' ELSE N'" + dialects.NameUnitBytes + "' END,\n" +
		"       COALESCE(c.collation_name, N''),\n" +
		"       ty.name + CASE WHEN c.max_length < 0 THEN N'(max)' ELSE N'(' + CAST(" + units + " AS nvarchar(10)) + N')' END\n" +
		"FROM sys.columns AS c JOIN sys.types AS ty ON ty.user_type_id = c.user_type_id\n" +
		"WHERE c.object_id = OBJECT_ID(N'" + s.Table + "', N'U') AND c.name = N'" + s.NameCol + "';"
}

// ExactRemedy gives the name column the binary collation schedlock's own
// tables use, Latin1_General_100_BIN2. A column of the primary key cannot
// be altered while the key exists, so the key is dropped and added back
// around it.
func (Builder) ExactRemedy(s dialects.Schema, col dialects.NameColumn) string {
	typ := col.Type
	if typ == "" {
		typ = "nvarchar(" + strconv.Itoa(col.Width) + ")"
	}
	return "ALTER TABLE " + s.Table + " ALTER COLUMN " + s.NameCol + " " + typ + " COLLATE " + nameCollation + " NOT NULL" +
		" (drop the table's primary key first and add it back after)"
}

// CheckVerbatimName refuses, on preset tables, a name ending in a space:
// SQL Server compares strings as if trailing spaces were not there, so it
// would be one lock with the name without them. (The native table stores
// such a name as FitName maps it.)
func (Builder) CheckVerbatimName(name string) string {
	if strings.HasSuffix(name, " ") {
		return "it ends in a space, which SQL Server ignores when it compares names, so it would be one lock with the name without it"
	}
	return ""
}

// ReleaseDelete deletes the owner's live row once at-least has passed
// (locked_at + at-least <= now).
func (Builder) ReleaseDelete(s dialects.Schema) locktable.Stmt {
	z := zone(s)
	return deleteStmt(s, "t."+s.NameCol+" = @p1 AND t."+s.OwnerCol+" = @p2 AND "+z.ToUTC("t."+s.UntilCol)+" > n.now"+
		" AND "+plusMs(z.ToUTC("t."+s.LockedAtCol), "@p3")+" <= n.now",
		locktable.ArgName, locktable.ArgOwner, locktable.ArgAtLeastMs)
}

// Sweep deletes the owner's row once its lease has ended.
func (Builder) Sweep(s dialects.Schema) locktable.Stmt {
	return deleteStmt(s, "t."+s.NameCol+" = @p1 AND t."+s.OwnerCol+" = @p2 AND "+zone(s).ToUTC("t."+s.UntilCol)+" <= n.now",
		locktable.ArgName, locktable.ArgOwner)
}

// Delete deletes the row of the name, whoever holds it.
func (Builder) Delete(s dialects.Schema) locktable.Stmt {
	return deleteStmt(s, "t."+s.NameCol+" = @p1", locktable.ArgName)
}

// deleteStmt is DELETE … WHERE where against the statement's one clock
// reading, with OUTPUT 1 for the deleted row.
func deleteStmt(s dialects.Schema, where string, args ...locktable.Arg) locktable.Stmt {
	return locktable.Stmt{
		SQL:    "DELETE t\nOUTPUT CAST(1 AS bigint)\nFROM " + s.Table + " AS t CROSS JOIN " + clockTable + "\nWHERE " + where + ";",
		Args:   args,
		Result: locktable.ResultRow,
	}
}
