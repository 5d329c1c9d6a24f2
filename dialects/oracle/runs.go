package oracle

import (
	"strconv"

	"github.com/schedlock/schedlock/dialects/internal/oralike"
	"github.com/schedlock/schedlock/dialects/locktable"
)

var _ locktable.RunsBuilder = (*Builder)(nil)

// RunsSQL is the run table's SQL: :N placeholders, TIMESTAMP(3) times
// holding SYS_EXTRACT_UTC(SYSTIMESTAMP), ROWNUM over an ordered subquery
// (11g has no FETCH FIRST), and the CREATE TABLE in the PL/SQL block that
// ignores ORA-00955, as for the lock table.
func (b *Builder) RunsSQL() locktable.RunsSQL {
	return locktable.RunsSQL{
		Param:   func(i int, _ locktable.ParamKind) string { return ":" + strconv.Itoa(i) },
		Now:     sqlNow,
		PlusMs:  func(ts, ms string) string { return ts + " + NUMTODSINTERVAL(" + ms + " / 1000, 'SECOND')" },
		EpochMs: epochMs,
		Limit: func(sel, rest, n string) string {
			return "SELECT * FROM (SELECT " + sel + " " + rest + ") WHERE ROWNUM <= " + n
		},
		NameType: "VARCHAR2(%d CHAR)", TextType: "VARCHAR2(255 CHAR)",
		TimeType: "TIMESTAMP(3)", BigIntType: "NUMBER(19)", IntType: "NUMBER(10)",
		CreateIfMissing: func(_, create string) string { return oralike.Ignoring(create, oraNameInUse) },
	}
}
