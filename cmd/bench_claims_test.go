package cmd

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/internal/benchkit"
)

func TestBenchClaimsOnSQLite(t *testing.T) {
	dsn := "sqlite:" + emptySQLiteFile(t, "bench.db")
	r := runCmd(t, false, nil, "bench", "--claims", "--dsn", dsn, "--workers", "2", "--batch", "3", "--cycles", "10", "-o", "json")
	if r.err != nil {
		t.Fatalf("bench --claims: %v\n%s", r.err, r.stderr)
	}
	var rep benchkit.ClaimsReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if rep.Workers != 2 || rep.Batch != 3 || rep.ReadyRows < 1000 || len(rep.Work) != 2 || rep.Work[0].Raw == nil || len(rep.Work[1].Strategies) != 1 || len(rep.Anchors) == 0 {
		t.Fatalf("report %+v", rep)
	}
	table := runCmd(t, false, nil, "bench", "--claims", "--dsn", dsn, "--cycles", "5")
	if table.err != nil || !strings.Contains(table.stdout, "raw SQL") || !strings.Contains(table.stdout, "River") {
		t.Fatalf("bench --claims table: %v\n%s", table.err, table.stdout)
	}
}

// --peers where the peer cannot run (River needs PostgreSQL): one line
// on stderr, the rest of the bench runs and exits 0; --no-complete
// measures the claim alone.
func TestBenchClaimsPeersUnavailable(t *testing.T) {
	dsn := "sqlite:" + emptySQLiteFile(t, "bench.db")
	r := runCmd(t, false, nil, "bench", "--claims", "--peers", "--no-complete", "--dsn", dsn, "--workers", "2", "--cycles", "5", "-o", "json")
	if r.err != nil {
		t.Fatalf("bench --claims --peers: %v\n%s", r.err, r.stderr)
	}
	if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "--peers: River runs on PostgreSQL") {
		t.Fatalf("stderr %q; want one line saying River needs PostgreSQL", r.stderr)
	}
	var rep benchkit.ClaimsReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if rep.Peer != nil || len(rep.Work) != 1 || rep.Work[0].Work != benchkit.WorkClaim || rep.Work[0].Raw == nil || rep.Work[0].Raw.Rows == 0 {
		t.Fatalf("report %+v; want the claim alone, no peer", rep)
	}
}

func TestBenchClaimsBadInput(t *testing.T) {
	dsn := "sqlite:" + emptySQLiteFile(t, "bench.db")
	for _, args := range [][]string{
		{"--batch", "0"},
		{"--batch", "10001"},
		{"--workers", "0"},
		{"--strategy", "session"},
		{"--locks", "5"},
		{"--strategy", "skip-locked"}, // SQLite claims optimistically only
		{"--wait"},
	} {
		r := runCmd(t, false, nil, append([]string{"bench", "--claims", "--dsn", dsn, "--cycles", "1"}, args...)...)
		var usage *UsageError
		if !errors.As(r.err, &usage) {
			t.Errorf("bench --claims %v: %v; want a usage error", args, r.err)
		}
	}
}
