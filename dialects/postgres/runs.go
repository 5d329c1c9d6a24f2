package postgres

import (
	"strconv"
	"strings"

	"github.com/schedlock/schedlock/dialects/locktable"
)

var _ locktable.RunsBuilder = Builder{}

// RunsSQL is the run table's SQL: $n placeholders with explicit casts,
// timestamp(3) times holding UTC, LIMIT, CREATE TABLE IF NOT EXISTS.
// "Now" is statement_timestamp(), not the lock table's clock_timestamp():
// one reading per statement, so a run's started_at (now minus its
// duration) and ended_at (now) are exactly its duration apart; every
// run-table statement runs alone in autocommit, so it is the time the
// statement reached the server.
func (Builder) RunsSQL() locktable.RunsSQL {
	return locktable.RunsSQL{
		Param: func(i int, kind locktable.ParamKind) string {
			if kind == locktable.ParamInt {
				return "$" + strconv.Itoa(i) + "::bigint"
			}
			return "$" + strconv.Itoa(i) + "::text"
		},
		Now:     runsNow,
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

// runsNow is the run table's clock: the statement's start in UTC, to the
// millisecond, the same value wherever the statement names it.
const runsNow = "date_trunc('milliseconds', statement_timestamp() AT TIME ZONE 'UTC')"
