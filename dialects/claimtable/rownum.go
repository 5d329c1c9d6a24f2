package claimtable

import (
	"strconv"
	"strings"
)

// RowNumSelect assembles s for the Oracle family (Oracle, Dameng): a limit without a lock
// as SELECT … FROM (SELECT … ORDER BY …) WHERE ROWNUM <= n; a lock as FOR
// UPDATE SKIP LOCKED without a limit (the caller reads what it needs).
func RowNumSelect(s Select) string {
	inner := "SELECT " + strings.Join(s.Columns, ", ") + " FROM " + s.Table
	if s.Where != "" {
		inner += " WHERE " + s.Where
	}
	if s.OrderBy != "" {
		inner += " ORDER BY " + s.OrderBy
	}
	if s.Lock {
		return inner + " FOR UPDATE SKIP LOCKED"
	}
	if s.Limit == "" {
		return inner
	}
	aliased := make([]string, len(s.Columns))
	names := make([]string, len(s.Columns))
	for i, c := range s.Columns {
		names[i] = "c" + strconv.Itoa(i+1)
		aliased[i] = c + " " + names[i]
	}
	inner = "SELECT " + strings.Join(aliased, ", ") + inner[len("SELECT "+strings.Join(s.Columns, ", ")):]
	return "SELECT " + strings.Join(names, ", ") + " FROM (" + inner + ") WHERE ROWNUM <= " + s.Limit
}
