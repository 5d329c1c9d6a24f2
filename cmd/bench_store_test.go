package cmd

import (
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/benchkit"
)

// bench works on a backend that is not database/sql (the memory store):
// engine cycles, contention, hand-over and held leases through its
// lockers, with no SQL round trip and the connections not counted.
func TestBenchOnAStore(t *testing.T) {
	dsn := "memory://bench-" + strings.ReplaceAll(dialects.NewOwner(), ":", "-")
	rep := benchJSON(t, dsn, "--cycles", "10")
	if rep.Dialect != "memory" || rep.RoundTrip != nil || len(rep.Cycles) != 1 || rep.Cycles[0].Strategy != "table" || rep.Cycles[0].Engine.Cycles != 10 {
		t.Errorf("cycles report %+v %+v: want 10 table engine cycles, no round trip", rep.RoundTrip, rep.Cycles)
	}
	rep = benchJSON(t, dsn, "--workers", "2", "--wait", "--locks", "10", "--cycles", "5")
	checkContention(t, rep, 2, "table")
	checkHandOver(t, rep, 5, "table")
	if h := rep.HeldLocks; h == nil || h.Acquired != 10 || h.ConnectionsSource != benchkit.SourceNone {
		t.Errorf("held_locks %+v: want 10 leases held, connections not counted", h)
	}
	r := runCmd(t, false, nil, "bench", "--dsn", dsn, "--strategy", "table", "--locks", "3")
	if r.err != nil {
		t.Fatalf("--strategy table --locks on a store: %v", r.err)
	}
	if strings.Contains(r.stdout, "connections") || !strings.Contains(r.stdout, "3 locks held") {
		t.Errorf("table:\n%s\nwant the held leases without a connection count", r.stdout)
	}
}
