package dynamodb

import (
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/schedlock/schedlock/dialects"
)

// Facts is what detection read: DescribeTable of the DSN's table (or the
// default one) when the backend opened, and DescribeContinuousBackups
// when it was probed.
type Facts struct {
	Region   string
	Endpoint string // "" for AWS itself
	Table    string
	// TableStatus is DynamoDB's (ACTIVE, CREATING, UPDATING, …), or
	// "missing".
	TableStatus string
	// KeySchema is the table's key, as "name (S, HASH)".
	KeySchema string
	// Billing is PAY_PER_REQUEST or PROVISIONED (with its write units).
	Billing string
	// Replicas are the regions of a global table's other replicas; with
	// MultiRegionConsistency other than STRONG they take writes that
	// replicate asynchronously, last writer wins.
	Replicas               []string
	MultiRegionConsistency string
	// PITR is point-in-time recovery: ENABLED or DISABLED, "unknown"
	// until probed, pitrUnanswered where the endpoint did not say.
	PITR string

	describeRefused bool
}

// pitrUnanswered is Facts.PITR when DescribeContinuousBackups failed.
const pitrUnanswered = "unanswered"

// fromTable records a table description.
func (f *Facts) fromTable(t *types.TableDescription) {
	if t == nil {
		return
	}
	f.TableStatus = string(t.TableStatus)
	f.KeySchema = describeKeys(t.KeySchema, t.AttributeDefinitions)
	switch {
	case t.BillingModeSummary != nil && t.BillingModeSummary.BillingMode == types.BillingModePayPerRequest:
		f.Billing = string(types.BillingModePayPerRequest)
	case t.ProvisionedThroughput != nil && t.ProvisionedThroughput.WriteCapacityUnits != nil && *t.ProvisionedThroughput.WriteCapacityUnits > 0:
		f.Billing = fmt.Sprintf("PROVISIONED (%d write units)", *t.ProvisionedThroughput.WriteCapacityUnits)
	default:
		f.Billing = string(types.BillingModePayPerRequest)
	}
	for _, r := range t.Replicas {
		if r.RegionName != nil && *r.RegionName != f.Region {
			f.Replicas = append(f.Replicas, *r.RegionName)
		}
	}
	f.MultiRegionConsistency = string(t.MultiRegionConsistency)
	if f.PITR == "" {
		f.PITR = "unknown"
	}
}

// describeKeys writes a key schema as "name (S, HASH), at (N, RANGE)".
func describeKeys(keys []types.KeySchemaElement, defs []types.AttributeDefinition) string {
	typeOf := map[string]string{}
	for _, d := range defs {
		if d.AttributeName != nil {
			typeOf[*d.AttributeName] = string(d.AttributeType)
		}
	}
	var parts []string
	for _, k := range keys {
		if k.AttributeName == nil {
			continue
		}
		t := typeOf[*k.AttributeName]
		if t == "" {
			t = "?"
		}
		parts = append(parts, fmt.Sprintf("%s (%s, %s)", *k.AttributeName, t, k.KeyType))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func (f *Facts) info() dialects.Info {
	where := "region " + f.Region
	variant := ""
	if f.Endpoint != "" {
		where += ", endpoint " + f.Endpoint
		variant = "endpoint"
	}
	banner := fmt.Sprintf("DynamoDB (%s; table %s: %s", where, f.Table, f.TableStatus)
	if f.KeySchema != "" {
		banner += ", key " + f.KeySchema
	}
	if f.Billing != "" {
		banner += ", " + f.Billing
	}
	if len(f.Replicas) > 0 {
		banner += ", replicas in " + strings.Join(f.Replicas, ", ")
	}
	switch f.PITR {
	case "", "unknown":
	case pitrUnanswered:
		banner += ", point-in-time recovery not reported by this endpoint"
	default:
		banner += ", point-in-time recovery " + strings.ToLower(f.PITR) + " (not a lock risk)"
	}
	return dialects.Info{Dialect: Name, Product: Product, Variant: variant, Version: "2012-08-10", Mode: f.Region, Banner: banner + ")"}
}

// risks are what the table cannot promise. A global table whose replicas
// take writes with eventual consistency resolves concurrent writes in
// different regions by last writer wins: two regions can each grant the
// lock. Point-in-time recovery is not a lock risk (a restore is a new
// table), and neither are eventually consistent reads here: every read
// this backend makes is strongly consistent, and conditions are judged
// on the latest item.
func (f *Facts) risks() []dialects.Risk {
	out := []dialects.Risk{}
	if len(f.Replicas) > 0 && f.MultiRegionConsistency != string(types.MultiRegionConsistencyStrong) {
		out = append(out, dialects.Risk{ID: dialects.RiskAsyncReplication,
			Detail: fmt.Sprintf("table %s is a global table with replicas in %s: writes replicate asynchronously and concurrent writes in two regions are resolved by last writer wins, so two regions can each grant a lock", f.Table, strings.Join(f.Replicas, ", ")),
			Remedy: "take every lock through one region's endpoint, or use a table with multi-region strong consistency (MRSC), or a table without replicas"})
	}
	return out
}
