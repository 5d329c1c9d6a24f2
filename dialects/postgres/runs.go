package postgres

import (
	"strconv"
	"strings"

	"github.com/schedlock/schedlock/dialects/locktable"
)

var _ locktable.RunsBuilder = Builder{}

// RunsSQL is the run table's SQL: $n placeholders with explicit casts,
// timestamp(3) times holding UTC on the clock_timestamp() clock, LIMIT,
// CREATE TABLE IF NOT EXISTS.
func (Builder) RunsSQL() locktable.RunsSQL {
	return locktable.RunsSQL{
		Param: func(i int, kind locktable.ParamKind) string {
			if kind == locktable.ParamInt {
				return "$" + strconv.Itoa(i) + "::bigint"
			}
			return "$" + strconv.Itoa(i) + "::text"
		},
		Now:     now,
		PlusMs:  func(ts, ms string) string { return ts + " + " + ms + " * interval '1 millisecond'" },
		EpochMs: epochMs,
		Limit: func(sel, rest, n string) string {
			return "SELECT " + sel + " " + rest + " LIMIT " + n
		},
		NameType: "varchar(%d)", TextType: "varchar(" + strconv.Itoa(ownerBytes) + ")",
		TimeType: "timestamp(3)", BigIntType: "bigint", IntType: "integer",
		CreateIfMissing: func(_, create string) string {
			return strings.Replace(create, "CREATE TABLE ", "CREATE TABLE IF NOT EXISTS ", 1)
		},
	}
}
