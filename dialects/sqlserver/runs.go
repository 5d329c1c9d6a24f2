package sqlserver

import (
	"strconv"

	"github.com/schedlock/schedlock/dialects/locktable"
)

var _ locktable.RunsBuilder = Builder{}

// RunsSQL is the run table's SQL: @pN placeholders, datetime2(3) times
// holding SYSUTCDATETIME(), names and owners in the binary collation,
// TOP (n), and a CREATE TABLE guarded by OBJECT_ID (SQL Server 2012 has
// no IF NOT EXISTS).
func (Builder) RunsSQL() locktable.RunsSQL {
	return locktable.RunsSQL{
		Param:   func(i int, _ locktable.ParamKind) string { return "@p" + strconv.Itoa(i) },
		Now:     nowSQL,
		PlusMs:  plusMs,
		EpochMs: epochMs,
		Limit: func(sel, rest, n string) string {
			return "SELECT TOP (" + n + ") " + sel + " " + rest
		},
		NameType: "nvarchar(%d) COLLATE " + nameCollation, TextType: "nvarchar(" + strconv.Itoa(ownerUnits) + ") COLLATE " + nameCollation,
		TimeType: "datetime2(3)", BigIntType: "bigint", IntType: "int",
		CreateIfMissing: func(table, create string) string {
			return "IF OBJECT_ID(N'" + table + "', N'U') IS NULL\n" + create
		},
	}
}
