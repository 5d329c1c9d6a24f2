package mongodb

import (
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

// TestRisks: what each deployment shape and concern is reported as, and
// which of them can hand a lock to two holders.
func TestRisks(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    Facts
		want string // risk IDs, sorted by report order
	}{
		{"standalone", Facts{Topology: TopologyStandalone, WriteConcern: "majority"}, "standalone"},
		{"one member", Facts{Topology: TopologyReplicaSet, SetName: "rs0", Members: 1, WriteConcern: "1"}, "single-member"},
		{"three members, majority", Facts{Topology: TopologyReplicaSet, SetName: "rs0", Members: 3, WriteConcern: "majority"}, ""},
		{"three members, w:1", Facts{Topology: TopologyReplicaSet, SetName: "rs0", Members: 3, WriteConcern: "1"}, dialects.RiskAsyncReplication},
		{"sharded, w:2, local reads", Facts{Topology: TopologySharded, WriteConcern: "2", ReadConcern: "local"}, dialects.RiskAsyncReplication + " read-concern"},
		{"FerretDB 1", Facts{Topology: TopologyStandalone, WriteConcern: "majority", FerretDB: "v1.24.2"}, dialects.RiskNonAtomicUpdates + " standalone"},
	} {
		var ids []string
		two := 0
		for _, r := range tc.f.risks() {
			ids = append(ids, r.ID)
			if r.TwoHolders() {
				two++
			}
			if r.Detail == "" || r.Remedy == "" {
				t.Errorf("%s: risk %s without detail or remedy", tc.name, r.ID)
			}
		}
		if got := strings.Join(ids, " "); got != tc.want {
			t.Errorf("%s: risks %q, want %q", tc.name, got, tc.want)
		}
		wantTwo := strings.Count(tc.want, dialects.RiskAsyncReplication) + strings.Count(tc.want, dialects.RiskNonAtomicUpdates)
		if two != wantTwo {
			t.Errorf("%s: %d two-holder risks, want %d", tc.name, two, wantTwo)
		}
	}
}
