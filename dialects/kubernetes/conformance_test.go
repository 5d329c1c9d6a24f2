package kubernetes_test

import (
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
)

// TestConformanceLive runs the lock contract's suite on the API server of
// SCHEDLOCK_TEST_KUBERNETES_DSN (scripts/test.sh: the test API server
// assembled from k8s.io/apiserver).
func TestConformanceLive(t *testing.T) {
	b := open(t, liveDSN(t))
	// The table is the DSN's namespace: a table name is a namespace, and
	// the suite's own names (with "_") are not namespace names.
	dialecttest.Run(t, b, dialecttest.Options{Tables: []dialects.Table{{Preset: dialects.PresetSchedlock, Name: "schedlock"}}})
}
