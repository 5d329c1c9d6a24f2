package mysql

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/benchops"
	"github.com/schedlock/schedlock/internal/benchkit"
)

// The bench finds the raw baselines on the opened backend.
var (
	_ benchkit.SessionBaseline = (*Backend)(nil)
	_ benchops.HoldingCounter  = (*Backend)(nil)
	_ benchops.ClaimWork       = (*Backend)(nil)
)

// CountHoldingSessions counts the distinct connections holding the
// scoped GET_LOCK names of this database: none while the names are free,
// one per connection once two connections each hold one.
func TestCountHoldingSessionsLive(t *testing.T) {
	ctx := testContext(t)
	d := openDetected(t)
	names := []string{uniqueName("count-a-"), uniqueName("count-b-")}
	counter := conn(t, d.SQL)
	if n, err := d.CountHoldingSessions(ctx, counter, names); err != nil || n != 0 {
		t.Fatalf("free names: %d, %v; want 0", n, err)
	}
	var ids []string
	for _, name := range names {
		c := conn(t, d.SQL)
		var got int
		if err := c.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", LockName(d.Database, name)).Scan(&got); err != nil || got != 1 {
			t.Fatalf("GET_LOCK(%q): %d, %v", name, got, err)
		}
		ids = append(ids, connectionID(t, c))
	}
	if n, err := d.CountHoldingSessions(ctx, counter, names); err != nil || n != len(ids) {
		t.Fatalf("names held by connections %v: %d, %v", ids, n, err)
	}
	if n, err := d.CountHoldingSessions(ctx, counter, names[:1]); err != nil || n != 1 {
		t.Fatalf("one name held: %d, %v; want 1", n, err)
	}
}

// benchkit.Run takes the raw session statements and the server-side
// count of lock holders from the backend itself.
func TestBenchUsesTheBackendsBaselinesLive(t *testing.T) {
	d := openDetected(t)
	if sessionSupport(d.Info) != nil {
		t.Fatalf("%s %s has no session locks to measure", d.Info.Product, d.Info.Version)
	}
	r, err := benchkit.Run(testContext(t), d, benchkit.Plan{
		Strategies: []dialects.Strategy{dialects.StrategySession},
		Cycles:     true,
		Locks:      3,
		Budget:     benchkit.Budget{Cycles: 20},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Cycles) != 1 || r.Cycles[0].Raw == nil || r.Cycles[0].Raw.Cycles == 0 {
		t.Fatalf("session cycles %+v: want raw GET_LOCK cycles beside the engine's", r.Cycles)
	}
	h := r.HeldLocks
	if h == nil || h.Acquired != 3 || h.ConnectionsSource != benchkit.SourceServer || h.ServerSessions == nil || *h.ServerSessions < 1 || *h.ServerSessions > 3 {
		t.Fatalf("held locks %+v: want 3 held, counted on the server by IS_USED_LOCK", h)
	}
}

// benchkit.RunClaims compares the engine's claim work with the backend's
// hand-written SQL, which claims and completes rows without errors.
func TestBenchClaimsUseTheBackendsRawClaimLive(t *testing.T) {
	d := openDetected(t)
	r, err := benchkit.RunClaims(testContext(t), d, benchkit.ClaimPlan{Workers: 2, Batch: 5, Budget: benchkit.Budget{Cycles: 20}})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range r.Work {
		if w.Raw == nil || w.Raw.Rows == 0 || w.Raw.Errors != 0 || w.Raw.Lost != 0 || !strings.Contains(w.RawStatements[0], "FOR UPDATE SKIP LOCKED") {
			t.Fatalf("raw %s %+v (%q): want rows done by the hand-written transaction", w.Work, w.Raw, w.RawStatements)
		}
		for _, s := range w.Strategies {
			if s.Engine.Rows == 0 || s.Engine.Lost != 0 || s.FirstError != "" {
				t.Errorf("%s %s: %+v", w.Work, s.Strategy, s)
			}
		}
	}
}

// The package gives its baselines without linking the bench harness: a
// program that links MySQL for its locks carries no bench.
func TestLinksNoBenchHarness(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/schedlock/schedlock/dialects/mysql").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "github.com/schedlock/schedlock/internal/benchkit" {
			t.Errorf("dialects/mysql links %s", dep)
		}
	}
}
