package kubernetes_test

import (
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
)

// TestConformanceLive runs the lock contract's suite on the API server of
// SCHEDLOCK_TEST_KUBERNETES_DSN (scripts/test.sh: the test API server
// assembled from k8s.io/apiserver).
func TestConformanceLive(t *testing.T) {
	// Without the client-side rate limit (qps=-1): the suite's contention
	// checks run many contenders on one client, which the default 50
	// requests/s would stretch from seconds to minutes.
	dsn := liveDSN(t)
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	b := open(t, dsn+sep+"qps=-1")
	// The table is the DSN's namespace: a table name is a namespace, and
	// the suite's own names (with "_") are not namespace names.
	dialecttest.Run(t, b, dialecttest.Options{Tables: []dialects.Table{{Preset: dialects.PresetSchedlock, Name: "schedlock"}}})
}
