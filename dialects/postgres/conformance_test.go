package postgres

import (
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
)

// TestConformance runs the lock-contract suite live: the session strategy
// (advisory locks), then the table strategy on every preset.
func TestConformance(t *testing.T) {
	sqlDB := liveDB(t)
	db, err := New(t.Context(), sqlDB, nil)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	for _, strategy := range dialects.Strategies {
		t.Run(string(strategy), func(t *testing.T) {
			dialecttest.Run(t, db, dialecttest.Options{Strategies: []dialects.Strategy{strategy}})
		})
	}
}
