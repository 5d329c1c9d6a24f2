package cmd

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/output"
)

// A lock held with no end (a Redis key without an expiry) reads as such
// in the listing and in unlock's refusal, not as a lease that ends in
// 2562047 hours.
func TestLockHeldForGoodHasNoLeaseEnd(t *testing.T) {
	now := time.Date(2026, 12, 2, 16, 0, 0, 0, time.UTC)
	e := dialects.LockEntry{Name: "nightly", Owner: "someone", Source: "schedlock", State: dialects.StateHeld,
		LockedAt: now.Add(-time.Hour), Until: dialects.HeldForGood, DBNow: now}
	if cell := untilCell(e, false); strings.Contains(cell, "(in ") || !strings.Contains(cell, "no expiry") {
		t.Errorf("untilCell = %q, want it held with no expiry", cell)
	}
	if msg := liveLockMessage("nightly", e); strings.Contains(msg, "(in ") || !strings.Contains(msg, "with no lease end") {
		t.Errorf("liveLockMessage = %q, want a lock with no lease end", msg)
	}
	// JSON says no lease end as for Liquibase's lock: null, not year 9999.
	if j := lockJSON(e); j.LockUntil != nil {
		t.Errorf("lock_until = %q, want null", *j.LockUntil)
	}
	if row := locksTSV([]dialects.LockEntry{e}).Rows[0]; slices.Contains(row, output.Time(dialects.HeldForGood)) {
		t.Errorf("piped row %q shows the year 9999", row)
	}
}
