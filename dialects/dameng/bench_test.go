package dameng

import (
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/oralike/oraliketest"
)

// The benchmarks run against the live server (SCHEDLOCK_TEST_DAMENG_DSN,
// built with -tags dameng) and report cycles/s, to compare with the
// physical limit: one round trip of SELECT 1 FROM DUAL on one pinned
// connection. A session cycle is two round trips (the REQUEST block and
// the RELEASE block); a table cycle is the MERGE and the release UPDATE,
// plus one Inspect for the token on the native table
// (TestRoundTripsPerCycle counts them on the simulator).

func BenchmarkSelectFromDual(b *testing.B) {
	oraliketest.BenchSelectOne(b, liveDB(b), "SELECT 1 FROM DUAL")
}

func BenchmarkSessionCycle(b *testing.B) { oraliketest.BenchSessionCycle(b, liveDetected(b).DB) }

func BenchmarkTableCycle(b *testing.B) {
	var tables []dialects.Table
	for _, preset := range dialects.Presets() {
		tables = append(tables, dialects.Table{Preset: preset, Name: uniqueName("sl_bench_")})
	}
	oraliketest.BenchTableCycles(b, liveDetected(b).DB, tables)
}
