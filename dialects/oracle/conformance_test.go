package oracle

import (
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
)

// TestConformance runs the lock-contract suite live: the session strategy
// (DBMS_LOCK; the user needs EXECUTE on SYS.DBMS_LOCK, SELECT on
// SYS.GV_$LOCK, SYS.GV_$SESSION and SYS.DBMS_LOCK_ALLOCATED, and ALTER
// SYSTEM for the kill check), then the table strategy on every preset,
// under table names short enough for Oracle before 12.2.
func TestConformance(t *testing.T) {
	db := liveDetected(t)
	for _, strategy := range dialects.Strategies {
		t.Run(string(strategy), func(t *testing.T) {
			opts := dialecttest.Options{Strategies: []dialects.Strategy{strategy}}
			if strategy == dialects.StrategyTable {
				opts.Tables = shortTables()
			}
			dialecttest.Run(t, db, opts)
		})
	}
}
