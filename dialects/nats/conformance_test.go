package nats_test

import (
	"testing"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
)

// TestConformance runs the lock contract's suite on an embedded server.
func TestConformance(t *testing.T) {
	b := open(t, embedded(t))
	dialecttestRun(t, b, dialects.Table{Name: checks.NewPrefix()})
}

// TestConformanceLive runs it on the live server of SCHEDLOCK_TEST_NATS_DSN,
// on both layouts.
func TestConformanceLive(t *testing.T) {
	b := open(t, liveDSN(t))
	dialecttestRun(t, b, dialects.Table{Name: checks.NewPrefix()}, dialects.Table{Preset: dialects.PresetShedlock, Name: checks.NewPrefix()})
}

// testRisks are the two-holder risks of the tests' servers: JetStream's
// default fsync interval (the embedded server's and the Debian package's).
var testRisks = []string{dialects.RiskAsyncFsync}

// dialecttestRun runs the suite on tables of b.
func dialecttestRun(t *testing.T, b dialects.Backend, tables ...dialects.Table) {
	dialecttest.Run(t, b, dialecttest.Options{Tables: tables, AllowRisks: testRisks})
}
