package checks

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// riskyBackend is a backend whose probe reports risks: the fake SQL
// database of these tests, with a store's risks.
type riskyBackend struct {
	*sqlkit.DB
	risks []dialects.Risk
}

func (b riskyBackend) Probe(ctx context.Context, opts dialects.ProbeOptions) (dialects.Capabilities, error) {
	caps, err := b.DB.Probe(ctx, opts)
	caps.Risks = b.risks
	return caps, err
}

var (
	noPersistence = dialects.Risk{ID: dialects.RiskNoPersistence, Detail: "a restart forgets every lock", Remedy: "turn on appendonly"}
	singleMember  = dialects.Risk{ID: "single-member", Detail: "one member", Remedy: "run three"}
)

// probe.two-holders fails on a risk that can hand a lock to two holders,
// naming it and how to accept it; an accepted one warns; risks of another
// kind are probe.risks's warnings, not its failures.
func TestTwoHolderRisksFailUnlessAccepted(t *testing.T) {
	db, _ := openFake(faults{})
	only := []string{"probe.two-holders", "probe.risks"}
	run := func(t *testing.T, risks []dialects.Risk, allow ...string) map[string]Result {
		t.Helper()
		rep, err := Run(t.Context(), Config{Backend: riskyBackend{db.DB, risks}, Only: only, AllowRisks: allow})
		if err != nil {
			t.Fatal(err)
		}
		return results(rep)
	}
	t.Run("refused", func(t *testing.T) {
		got := run(t, []dialects.Risk{noPersistence, singleMember})
		th := got["probe.two-holders"]
		if th.Status != StatusFail || !strings.Contains(th.Detail, "no-persistence: a restart forgets every lock") ||
			!strings.Contains(th.Remedy, "turn on appendonly; or accept it with "+string(dialects.TermAllowRisk)+" no-persistence") ||
			strings.Contains(th.Detail, "single-member") {
			t.Errorf("probe.two-holders %+v: want it failed on no-persistence alone, with its remedy and how to accept it", th)
		}
		if r := got["probe.risks"]; r.Status != StatusWarn || !strings.Contains(r.Detail, "single-member") || strings.Contains(r.Detail, "no-persistence") {
			t.Errorf("probe.risks %+v: want a warning of single-member alone", r)
		}
	})
	t.Run("accepted", func(t *testing.T) {
		got := run(t, []dialects.Risk{noPersistence}, dialects.RiskNoPersistence)
		if th := got["probe.two-holders"]; th.Status != StatusWarn || !strings.Contains(th.Detail, "accepted: no-persistence") {
			t.Errorf("probe.two-holders %+v: want a warning naming the accepted risk", th)
		}
		if r := got["probe.risks"]; r.Status != StatusPass {
			t.Errorf("probe.risks %+v: want passed, no other risk", r)
		}
	})
	t.Run("another accepted, this one refused", func(t *testing.T) {
		got := run(t, []dialects.Risk{noPersistence}, dialects.RiskAsyncReplication)
		if th := got["probe.two-holders"]; th.Status != StatusFail {
			t.Errorf("probe.two-holders %+v: want failed", th)
		}
	})
	t.Run("none", func(t *testing.T) {
		got := run(t, []dialects.Risk{})
		if th := got["probe.two-holders"]; th.Status != StatusPass {
			t.Errorf("probe.two-holders %+v: want passed", th)
		}
	})
	t.Run("unknown name", func(t *testing.T) {
		rep, err := Run(t.Context(), Config{Backend: riskyBackend{db.DB, nil}, AllowRisks: []string{"no-persistance"}})
		if !errors.Is(err, dialects.ErrInvalid) || rep != nil || !strings.Contains(err.Error(), "no-persistence") {
			t.Errorf("Run = %v, %v; want no report and an error naming the known risks", rep, err)
		}
	})
}
