package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// TestClaimStrategyCatchesCockroachStub: on a simulated CockroachDB the
// probe sees SKIP LOCKED skip a locked row, yet the claim strategy stays
// optimistic (its row locks are best-effort, cockroach#121917), and
// selfcheck's claim.strategy says it caught that. With the product rule
// removed (a mutation: the recommendation follows the probe alone),
// claim.strategy fails.
func TestClaimStrategyCatchesCockroachStub(t *testing.T) {
	for _, mutated := range []bool{false, true} {
		_, db := openPgSim(t, pgSimConfig{Banner: cockroachBanner, Stub: true})
		if mutated {
			db.DB = sqlkit.New(db.SQL, db.Info, nil, probeOnly{db})
		}
		rep, err := checks.Run(testCtx(t), checks.Config{Backend: db, Only: []string{"claim.strategy"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Results) != 1 {
			t.Fatalf("results %+v; want claim.strategy alone", rep.Results)
		}
		res := rep.Results[0]
		switch {
		case !mutated && (res.Status != checks.StatusPass || !strings.HasPrefix(res.Detail, "caught:")):
			t.Errorf("claim.strategy on CockroachDB: %s %q; want a pass that caught the stub", res.Status, res.Detail)
		case mutated && (res.Status != checks.StatusFail || !strings.Contains(res.Remedy, "optimistic")):
			t.Errorf("claim.strategy with skip-locked recommended on CockroachDB: %s %q (remedy %q); want a failure naming optimistic", res.Status, res.Detail, res.Remedy)
		default:
			t.Logf("mutated %v: %s: %s", mutated, res.Status, res.Detail)
		}
	}
}

// probeOnly is the mutation of TestClaimStrategyCatchesCockroachStub: the
// backend's probe without the product rule, so the claim strategy
// follows what the probe saw alone.
type probeOnly struct{ *Backend }

func (p probeOnly) ProbeDialect(ctx context.Context, opts dialects.ProbeOptions) (dialects.Capabilities, error) {
	caps, err := p.Backend.ProbeDialect(ctx, opts)
	caps.Recommended.ClaimStrategy, caps.Recommended.ClaimReason = "", ""
	return caps, err
}
