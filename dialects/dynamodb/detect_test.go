package dynamodb

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/schedlock/schedlock/dialects"
)

// TestRisks: a global table whose replicas take writes with eventual
// consistency (last writer wins) is the async-replication risk, which can
// give a lock to two holders; one with multi-region strong consistency
// is not, and neither is point-in-time recovery being off.
func TestRisks(t *testing.T) {
	table := func(mrc types.MultiRegionConsistency, regions ...string) *types.TableDescription {
		d := &types.TableDescription{TableStatus: types.TableStatusActive, MultiRegionConsistency: mrc,
			KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("name"), KeyType: types.KeyTypeHash}},
			AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("name"), AttributeType: types.ScalarAttributeTypeS}}}
		for _, r := range regions {
			d.Replicas = append(d.Replicas, types.ReplicaDescription{RegionName: aws.String(r)})
		}
		return d
	}
	for _, c := range []struct {
		what    string
		d       *types.TableDescription
		pitr    string
		twoHold bool
	}{
		{"one region, PITR off", table(""), "DISABLED", false},
		{"global table, eventual", table(types.MultiRegionConsistencyEventual, "us-east-1", "eu-west-1"), "ENABLED", true},
		{"global table, no consistency reported", table("", "us-east-1", "us-west-2"), "", true},
		{"global table, strong", table(types.MultiRegionConsistencyStrong, "us-east-1", "us-east-2", "us-west-2"), "", false},
	} {
		f := Facts{Region: "us-east-1", Table: "locks", PITR: c.pitr}
		f.fromTable(c.d)
		risks := f.risks()
		got := false
		for _, r := range risks {
			if r.TwoHolders() {
				got = true
				if r.ID != dialects.RiskAsyncReplication || !strings.Contains(r.Detail, "last writer wins") {
					t.Errorf("%s: risk %+v", c.what, r)
				}
			}
		}
		if got != c.twoHold {
			t.Errorf("%s: risks %+v; want two-holder risk %v", c.what, risks, c.twoHold)
		}
		if risks == nil {
			t.Errorf("%s: nil risks, want an empty list", c.what)
		}
		if f.KeySchema != "name (S, HASH)" || !strings.Contains(f.info().Banner, "key name (S, HASH)") {
			t.Errorf("%s: key %q, banner %q", c.what, f.KeySchema, f.info().Banner)
		}
	}
}
