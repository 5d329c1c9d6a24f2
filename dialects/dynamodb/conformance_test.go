package dynamodb_test

import (
	"testing"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
)

// TestConformanceLive runs the lock contract's suite on the live
// endpoint, on a native and a ShedLock-layout table of the run's own
// (created and dropped by it).
func TestConformanceLive(t *testing.T) {
	b := openLive(t)
	p := checks.NewPrefix()
	dialecttest.Run(t, b, dialecttest.Options{Tables: []dialects.Table{{Name: p + "_n"}, {Preset: dialects.PresetShedlock, Name: p + "_s"}}})
}
