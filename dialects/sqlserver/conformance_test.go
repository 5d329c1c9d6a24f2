package sqlserver

import (
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
)

// TestConformance runs the lock-contract suite live when
// SCHEDLOCK_TEST_SQLSERVER_DSN is set: the session strategy
// (sp_getapplock), then the table strategy on every preset, each table
// unique to the run and dropped after it.
func TestConformance(t *testing.T) {
	db := liveDetected(t)
	for _, strategy := range dialects.Strategies {
		t.Run(string(strategy), func(t *testing.T) {
			dialecttest.Run(t, db, dialecttest.Options{Strategies: []dialects.Strategy{strategy}})
		})
	}
}
