package mysql

import (
	"fmt"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects/internal/claimsim"
	"github.com/schedlock/schedlock/dialects/internal/leasesim"
)

// TestFinishManyOnSimulator: the batch finish this dialect writes, run on
// the claim simulator, which evaluates its conditions and assignments:
// each outcome lands as the single calls would, and exactly the rows the
// owner no longer holds are left and reported.
func TestFinishManyOnSimulator(t *testing.T) {
	claimsim.CheckFinish(t, ClaimBuilder{}, claimsim.Dialect{Clock: []string{sqlNow}, Sequential: true, LastInsertID: true, Env: leasesim.Env{Ident: func(name string) (any, bool) { return name, name == "MICROSECOND" }, Func: timestampAdd}})
}

// timestampAdd is MySQL's TIMESTAMPADD(MICROSECOND, n, ts) for the
// simulator.
func timestampAdd(name string, args []any) (any, bool, error) {
	if name != "TIMESTAMPADD" || len(args) != 3 || args[0] != "MICROSECOND" {
		return nil, false, nil
	}
	n, ok1 := args[1].(int64)
	ts, ok2 := args[2].(time.Time)
	if !ok1 || !ok2 {
		return nil, true, fmt.Errorf("TIMESTAMPADD(MICROSECOND, %T, %T)", args[1], args[2])
	}
	return ts.Add(time.Duration(n) * time.Microsecond), true, nil
}
