package dameng

import (
	"testing"

	"github.com/schedlock/schedlock/dialects/internal/claimsim"
)

// TestFinishManyOnSimulator: the batch finish this dialect writes, run on
// the claim simulator, which evaluates its conditions and assignments:
// each outcome lands as the single calls would, and exactly the rows the
// owner no longer holds are left and reported.
func TestFinishManyOnSimulator(t *testing.T) {
	claimsim.CheckFinish(t, ClaimBuilder{}, claimsim.Dialect{Clock: []string{sqlNow}})
}
