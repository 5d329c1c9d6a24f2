package mysql

import (
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
)

// TestConformance runs the lock-contract suite live: the session strategy
// (GET_LOCK) and the table strategy on every preset, each table unique to
// the run and dropped after it.
func TestConformance(t *testing.T) {
	d := openDetected(t)
	dialecttest.Run(t, d, dialecttest.Options{
		Strategies: []dialects.Strategy{dialects.StrategySession, dialects.StrategyTable},
	})
}
