package mysql

import (
	"strings"

	"github.com/schedlock/schedlock/dialects/locktable"
)

var _ locktable.RunsBuilder = (*Builder)(nil)

// RunsSQL is the run table's SQL: ? placeholders, DATETIME(3) times
// holding UTC_TIMESTAMP(3), the name in the lock table's binary
// collation, LIMIT (a derived table, so the prune may read the table it
// deletes from), CREATE TABLE IF NOT EXISTS, InnoDB.
func (b *Builder) RunsSQL() locktable.RunsSQL {
	return locktable.RunsSQL{
		Param:   func(int, locktable.ParamKind) string { return "?" },
		Now:     sqlNow,
		PlusMs:  func(ts, ms string) string { return "TIMESTAMPADD(MICROSECOND, " + ms + " * 1000, " + ts + ")" },
		EpochMs: epochMs,
		Limit: func(sel, rest, n string) string {
			return "SELECT " + sel + " " + rest + " LIMIT " + n
		},
		NameType: "VARCHAR(%d) CHARACTER SET utf8mb4 COLLATE " + b.Collation, TextType: "VARCHAR(255)",
		TimeType: "DATETIME(3)", BigIntType: "BIGINT", IntType: "INT",
		CreateIfMissing: func(_, create string) string {
			return strings.Replace(create, "CREATE TABLE ", "CREATE TABLE IF NOT EXISTS ", 1) + " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
		},
	}
}
