package nats

import (
	"slices"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

// Each deployment shape gives its risks; only the ones that can hand a
// lock to two holders are among dialects.TwoHolderRiskIDs.
func TestRisksOfFacts(t *testing.T) {
	file := map[string]bucketFacts{"locks": {name: "locks", history: 1, replicas: 1}}
	for _, c := range []struct {
		name  string
		facts facts
		want  []string
	}{
		{"2.9 defaults", facts{version: "2.9.10", buckets: file}, []string{dialects.RiskAsyncFsync, RiskNoPerKeyTTL}},
		{"2.11", facts{version: "2.11.0", buckets: file}, []string{dialects.RiskAsyncFsync}},
		{"no bucket yet", facts{version: "v2.12.1", buckets: map[string]bucketFacts{}}, []string{dialects.RiskAsyncFsync}},
		{"memory", facts{version: "2.11.0", buckets: map[string]bucketFacts{"shedlock-locks": {history: 1, memory: true}}}, []string{dialects.RiskNoPersistence}},
		{"cluster R1", facts{version: "2.11.0", cluster: "c1", buckets: file}, []string{dialects.RiskAsyncFsync, RiskSingleReplica}},
		{"cluster R3 history", facts{version: "2.11.0", cluster: "c1", buckets: map[string]bucketFacts{"l": {history: 5, replicas: 3}}}, []string{dialects.RiskAsyncFsync, RiskHistory}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &Backend{facts: c.facts}
			var got, two []string
			for _, r := range b.Risks() {
				got = append(got, r.ID)
				if r.TwoHolders() {
					two = append(two, r.ID)
				}
				if r.Detail == "" || r.Remedy == "" {
					t.Errorf("risk %+v lacks a detail or a remedy", r)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("risks %v, want %v", got, c.want)
			}
			for _, id := range two {
				if id != dialects.RiskAsyncFsync && id != dialects.RiskNoPersistence {
					t.Errorf("%s counted among the two-holder risks", id)
				}
			}
		})
	}
}
