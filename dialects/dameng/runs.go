package dameng

import (
	"github.com/schedlock/schedlock/dialects/locktable"
)

var _ locktable.RunsBuilder = (*Builder)(nil)

// RunsSQL is the run table's SQL: ? placeholders, TIMESTAMP(3) times
// holding SYS_EXTRACT_UTC(SYSTIMESTAMP), LIMIT, and a plain CREATE TABLE
// (the engine takes a failed one as success when the table can be read,
// as TableLocker.CreateTable does for the lock table).
func (b *Builder) RunsSQL() locktable.RunsSQL {
	return locktable.RunsSQL{
		Param:   func(int, locktable.ParamKind) string { return "?" },
		Now:     sqlNow,
		PlusMs:  plusMs,
		EpochMs: epochMs,
		Limit: func(sel, rest, n string) string {
			return "SELECT " + sel + " " + rest + " LIMIT " + n
		},
		NameType: "VARCHAR(%d CHAR)", TextType: "VARCHAR(255 CHAR)",
		TimeType: "TIMESTAMP(3)", BigIntType: "BIGINT", IntType: "INT",
	}
}
