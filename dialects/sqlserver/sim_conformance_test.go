package sqlserver

import (
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
)

// TestConformanceOnSimulator runs the lock-contract suite against the
// simulator: the session strategy (sp_getapplock), then the table strategy
// on every preset.
func TestConformanceOnSimulator(t *testing.T) {
	db := newSim().detected(t)
	for _, strategy := range dialects.Strategies {
		t.Run(string(strategy), func(t *testing.T) {
			dialecttest.Run(t, db, dialecttest.Options{Strategies: []dialects.Strategy{strategy}})
		})
	}
}
