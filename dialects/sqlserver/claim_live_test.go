package sqlserver

import (
	"testing"

	"github.com/schedlock/schedlock/dialects/claimtable/claimtest"
)

// TestClaimsLive runs the claim conformance suite and selfcheck's claim.*
// checks on the live SQL Server server named by dsnEnv (skipped when it is
// unset; here only golden SQL and the fake driver cover it).
func TestClaimsLive(t *testing.T) {
	db := liveDetected(t)
	claimtest.Run(t, db)
	t.Run("selfcheck", func(t *testing.T) { claimtest.RunChecks(t, db) })
}
