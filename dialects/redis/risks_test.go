package redis

import (
	"slices"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

// Each deployment shape gives its risks under the IDs the rest of
// schedlock knows (run's warning, lock.Open's, selfcheck's
// probe.two-holders), and every one of them can hand a lock to two
// holders; a store with AOF, no eviction and no replicas has none.
func TestRisksOfFacts(t *testing.T) {
	for _, c := range []struct {
		name  string
		facts Facts
		want  []string
	}{
		{"safe", Facts{Mode: ModeStandalone, AOF: true, MaxMemoryPolicy: "noeviction"}, nil},
		{"throwaway", Facts{Mode: ModeStandalone, MaxMemoryPolicy: "noeviction"}, []string{dialects.RiskNoPersistence}},
		{"rdb", Facts{Mode: ModeStandalone, RDBSave: "3600 1", MaxMemoryPolicy: "noeviction"}, []string{dialects.RiskRDBOnly}},
		{"config refused", Facts{Mode: ModeStandalone, RDBSave: "?", AOF: false}, []string{dialects.RiskPersistenceUnknown}},
		{"evicting", Facts{Mode: ModeStandalone, AOF: true, MaxMemory: 10 << 20, MaxMemoryPolicy: "allkeys-lru"}, []string{dialects.RiskEviction}},
		{"evicting policy, no limit", Facts{Mode: ModeStandalone, AOF: true, MaxMemoryPolicy: "volatile-lru"}, []string{dialects.RiskEvictionPolicy}},
		{"replicas", Facts{Mode: ModeStandalone, AOF: true, Replicas: 1}, []string{dialects.RiskAsyncReplication}},
		{"cluster", Facts{Mode: ModeCluster, AOF: true}, []string{dialects.RiskAsyncReplication}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &Backend{facts: &c.facts}
			var got []string
			for _, r := range b.Risks() {
				got = append(got, r.ID)
				if !r.TwoHolders() {
					t.Errorf("risk %s is not among the two-holder risks %v", r.ID, dialects.TwoHolderRiskIDs())
				}
				if r.Detail == "" || r.Remedy == "" {
					t.Errorf("risk %+v lacks a detail or a remedy", r)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("risks %v, want %v", got, c.want)
			}
			if n := len(dialects.TwoHolderRisks(b)); n != len(c.want) {
				t.Errorf("TwoHolderRisks: %d, want %d", n, len(c.want))
			}
			if b.Risks() == nil {
				t.Error("Risks is nil, want an empty list")
			}
		})
	}
}
