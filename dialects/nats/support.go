package nats

import "github.com/schedlock/schedlock/dialects"

// supportRows are this backend's rows of the support table.
var supportRows = []dialects.ProductSupport{
	{
		Dialect:        Name,
		Product:        Product,
		Name:           "NATS JetStream KV (`nats://host:4222/BUCKET`, `tls://`)",
		Versions:       "2.9 and later",
		Session:        dialects.Feature{Status: dialects.FeatureNo, Detail: "no session locks: its locks are leases"},
		Table:          dialects.Feature{Status: dialects.FeatureYes, Detail: "a key per lock in a KV bucket, written under revision checks; the token is the KV revision of the acquire"},
		Recommended:    dialects.StrategyTable,
		Claim:          dialects.ClaimOptimistic,
		ClaimNote:      "no rows to claim",
		Listing:        dialects.Feature{Status: dialects.FeatureNo, Detail: "not yet"},
		Kill:           dialects.Feature{Status: dialects.FeatureNo, Detail: "no sessions to end"},
		Privileges:     []string{"publish and subscribe on the bucket's KV subjects and the JetStream API"},
		Verified:       dialects.VerifiedLive,
		VerifiedDetail: "the conformance suite runs on an embedded NATS server in every test run",
		Notes:          []string{"JetStream acknowledges writes before they reach disk by default (sync every 2 minutes): a server crash can lose a lock write"},
	},
}
