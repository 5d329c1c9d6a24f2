package dynamodb

import "github.com/schedlock/schedlock/dialects"

// supportRows are this backend's rows of the support table.
var supportRows = []dialects.ProductSupport{
	{
		Dialect:  Name,
		Product:  Product,
		Name:     "Amazon DynamoDB (`dynamodb://REGION/TABLE`, `?endpoint=` for a local server)",
		Versions: "API 2012-08-10 (tested on dynalite 4.0.0, not on DynamoDB itself)",
		Session:  dialects.Feature{Status: dialects.FeatureNo, Detail: "no session locks: its locks are items"},
		Table: dialects.Feature{Status: dialects.FeatureYes, Detail: "an item per lock, one conditional UpdateItem per acquire, refresh and release; " +
			"fencing token from ADD on a counter attribute in the acquire; lease times on the client's clock (DynamoDB has none a condition can read); " +
			"presets `schedlock` (native) and `shedlock` (ShedLock's `Shedlock` table: `_id`, `lockUntil`, `lockedAt`, `lockedBy`)"},
		Recommended:    dialects.StrategyTable,
		Claim:          dialects.ClaimOptimistic,
		ClaimNote:      "no rows to claim",
		Listing:        dialects.Feature{Status: dialects.FeatureYes, Detail: "one strongly consistent Scan per listing, paginated"},
		Kill:           dialects.Feature{Status: dialects.FeatureNo, Detail: "no sessions to end; a lease is released under the owner check, or by " + string(dialects.TermForceRelease)},
		Privileges:     []string{"dynamodb:GetItem, UpdateItem, Scan, DescribeTable on the lock table (CreateTable, DeleteTable to create and drop it; DescribeContinuousBackups optional: detect)"},
		Verified:       dialects.VerifiedLive,
		VerifiedDetail: "the conformance suite, the ShedLock race and the fault tests run on dynalite 4.0.0 (an in-memory DynamoDB implementation) when `SCHEDLOCK_TEST_DYNAMODB_DSN` is set; throttling, partition limits, global tables and IAM are not proved",
		Notes: []string{
			"lease times are each client's clock: a clock s ahead takes a lock s early, so keep hosts in sync (NTP)",
			"a global table (replicas taking writes, last writer wins) can grant a lock in two regions: lock through one region, or use multi-region strong consistency",
			"one item takes about 1,000 writes a second (one partition), so one lock name tops out near 500 cycles a second",
		},
	},
}
