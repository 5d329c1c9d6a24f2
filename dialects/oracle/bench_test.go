package oracle

import (
	"context"
	"testing"

	"github.com/schedlock/schedlock/dialects"
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

func BenchmarkSessionCycle(b *testing.B) {
	db := liveDetected(b)
	l, err := db.SessionLocker()
	if err != nil {
		b.Fatal(err)
	}
	oraliketest.BenchCycles(b, l, "schedlock-bench-session")
}

func BenchmarkTableCycle(b *testing.B) {
	db := liveDetected(b)
	for _, t := range shortTables() {
		b.Run(t.Preset, func(b *testing.B) {
			tl, err := db.TableLocker(t)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if err := tl.CreateTable(ctx); err != nil {
				b.Fatal(err)
			}
			defer func() { _ = tl.(dialects.TableDropper).DropTable(ctx) }()
			oraliketest.BenchCycles(b, tl, "schedlock-bench-table")
		})
	}
}
