package claimtest

import (
	"strings"
	"testing"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
)

// RunChecks runs selfcheck's claim.* checks on db as subtests: a failure,
// or a skip with a remedy, fails.
func RunChecks(t *testing.T, db dialects.Backend) {
	t.Helper()
	var ids []string
	for _, c := range checks.Suite(checks.Config{Backend: db}) {
		if strings.HasPrefix(c.ID, "claim.") {
			ids = append(ids, c.ID)
		}
	}
	if len(ids) == 0 {
		t.Fatalf("no claim checks for %s", db.Detected().Dialect)
	}
	rep, err := checks.Run(t.Context(), checks.Config{Backend: db, Only: ids})
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range rep.Results {
		t.Run(res.ID, func(t *testing.T) {
			switch {
			case res.Status == checks.StatusFail, res.Status == checks.StatusSkip && res.Remedy != "":
				t.Errorf("%s: %s: %s (remedy: %s)", res.Title, res.Status, res.Detail, res.Remedy)
			default:
				t.Logf("%s: %s", res.Status, res.Detail)
			}
		})
	}
}
