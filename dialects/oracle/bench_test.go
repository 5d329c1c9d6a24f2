package oracle

import (
	"testing"

	"github.com/schedlock/schedlock/dialects/internal/oralike/oraliketest"
)

// The benchmarks run against the live server (SCHEDLOCK_TEST_ORACLE_DSN)
// and report cycles/s, to compare with the physical limit: one round trip
// of SELECT 1 FROM dual on one pinned connection. A session cycle is two
// round trips (the REQUEST block and the RELEASE block); a table cycle is
// the MERGE and the release UPDATE, plus one Inspect for the token on the
// native table.

func BenchmarkSelectFromDual(b *testing.B) {
	oraliketest.BenchSelectOne(b, liveDB(b), "SELECT 1 FROM dual")
}

func BenchmarkSessionCycle(b *testing.B) { oraliketest.BenchSessionCycle(b, liveDetected(b).DB) }

func BenchmarkTableCycle(b *testing.B) {
	oraliketest.BenchTableCycles(b, liveDetected(b).DB, shortTables())
}
