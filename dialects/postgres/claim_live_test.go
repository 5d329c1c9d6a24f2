package postgres

import (
	"testing"

	"github.com/schedlock/schedlock/dialects/claimtable/claimtest"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// TestClaimsLive runs the claim conformance suite (skip-locked and
// optimistic) on the live server.
func TestClaimsLive(t *testing.T) {
	db, err := sqlkit.OpenLegacy(testCtx(t), liveDB(t), Name)
	if err != nil {
		t.Fatal(err)
	}
	claimtest.Run(t, db)
}

// TestClaimSelfcheckLive runs selfcheck's claim.* checks on the live
// server.
func TestClaimSelfcheckLive(t *testing.T) {
	db, err := sqlkit.OpenLegacy(testCtx(t), liveDB(t), Name)
	if err != nil {
		t.Fatal(err)
	}
	claimtest.RunChecks(t, db)
}
