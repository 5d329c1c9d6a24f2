package sqlserver

import (
	"database/sql/driver"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/fakesql"
)

// liquibaseTable is the simulated Liquibase lock table, as Liquibase
// creates it.
const liquibaseTable = dialects.LiquibaseTable

// liquibaseRow is the row ID = 1 of the simulated DATABASECHANGELOGLOCK:
// LOCKED bit, LOCKGRANTED datetime written with GETDATE() (server local
// time, which the simulated server keeps in UTC), LOCKEDBY nvarchar(255).
type liquibaseRow struct {
	locked  bool
	granted time.Time // zero: NULL
	owner   string    // "": NULL
}

// The Liquibase statements the simulator knows: the golden ones.
var (
	liquibaseInspectSQL = Builder{}.LiquibaseInspect(liquibaseTable)
	liquibaseReleaseSQL = Builder{}.LiquibaseRelease(liquibaseTable, true)
	liquibaseForceSQL   = Builder{}.LiquibaseRelease(liquibaseTable, false)
)

func isLiquibaseStatement(q string) bool {
	return q == liquibaseInspectSQL || q == liquibaseReleaseSQL || q == liquibaseForceSQL
}

// liquibaseStatement reads or clears the Liquibase row. LOCKED is a bit:
// go-mssqldb binds Go booleans as bit, which the simulator requires.
func (sim *simServer) liquibaseStatement(q string, args []driver.NamedValue) (fakesql.Response, error) {
	sim.mu.Lock()
	defer sim.mu.Unlock()
	lb := sim.liquibase
	if lb == nil {
		return fakesql.Response{}, invalidObject(liquibaseTable)
	}
	if q == liquibaseInspectSQL {
		var granted, owner any
		if !lb.granted.IsZero() {
			granted = lb.granted.UnixMilli()
		}
		if lb.owner != "" {
			owner = lb.owner
		}
		return fakesql.Response{Columns: []string{"LOCKED", "", "LOCKEDBY", ""},
			Rows: [][]any{{lb.locked, granted, owner, sim.now().UnixMilli()}}}, nil
	}
	set, setOK := args[0].Value.(bool)
	where, whereOK := args[1].Value.(bool)
	if !setOK || !whereOK {
		return fakesql.Response{}, simError(245, 16, "Conversion failed when converting a value to data type bit.")
	}
	if lb.locked != where {
		return fakesql.Response{RowsAffected: 0}, nil
	}
	if q == liquibaseReleaseSQL {
		owner, err := stringArg(args, 3)
		if err != nil {
			return fakesql.Response{}, err
		}
		if owner != lb.owner {
			return fakesql.Response{RowsAffected: 0}, nil
		}
	}
	lb.locked, lb.granted, lb.owner = set, time.Time{}, ""
	return fakesql.Response{RowsAffected: 1}, nil
}
