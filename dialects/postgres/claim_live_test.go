package postgres

import (
	"testing"

	"github.com/schedlock/schedlock/dialects/claimtable/claimtest"
)

// TestClaimsLive runs the claim conformance suite (skip-locked and
// optimistic) on the live server.
func TestClaimsLive(t *testing.T) {
	db, err := New(testCtx(t), liveDB(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	claimtest.Run(t, db)
}

// TestClaimSelfcheckLive runs selfcheck's claim.* checks on the live
// server.
func TestClaimSelfcheckLive(t *testing.T) {
	db, err := New(testCtx(t), liveDB(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	claimtest.RunChecks(t, db)
}
