package sqlite

import (
	"strings"

	"github.com/schedlock/schedlock/dialects/locktable"
)

var _ locktable.RunsBuilder = Builder{}

// RunsSQL is the run table's SQL: ? placeholders, times stored as text in
// the lock table's format, LIMIT, CREATE TABLE IF NOT EXISTS.
func (Builder) RunsSQL() locktable.RunsSQL {
	return locktable.RunsSQL{
		Param: func(int, locktable.ParamKind) string { return "?" },
		Now:   nowSQL,
		PlusMs: func(ts, ms string) string {
			return `strftime(` + timeFormat + `, ` + ts + `, (` + ms + ` / 1000.0) || ' seconds')`
		},
		EpochMs: epochMs,
		Limit: func(sel, rest, n string) string {
			return "SELECT " + sel + " " + rest + " LIMIT " + n
		},
		NameType: "TEXT", TextType: "TEXT", TimeType: "TEXT", BigIntType: "INTEGER", IntType: "INTEGER",
		CreateIfMissing: func(_, create string) string {
			return strings.Replace(create, "CREATE TABLE ", "CREATE TABLE IF NOT EXISTS ", 1)
		},
	}
}
