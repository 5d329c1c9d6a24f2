package redis

import "github.com/schedlock/schedlock/dialects"

// supportRows are this backend's rows of the support table (the
// Dialect's Support).
var supportRows = []dialects.ProductSupport{
	{
		Dialect:  Name,
		Product:  Product,
		Name:     "Redis (`redis://`, `rediss://`; Sentinel, Cluster)",
		Versions: "5+ (tested on 7.0)",
		Session:  dialects.Feature{Status: dialects.FeatureNo, Detail: "no session locks: a connection's end frees nothing"},
		Table: dialects.Feature{Status: dialects.FeatureYes, Detail: "leases as keys with an expiry: one script (EVAL once, then EVALSHA) per acquire, refresh and release, waiters woken by the release (Pub/Sub), " +
			"TIME and PEXPIRE on the server's clock, fencing token from a counter in the same script with the server's clock (µs) as its floor, so it grows across a restart without persistence; presets `schedlock` (native) and `shedlock` (ShedLock's `job-lock:<env>:<name>`, the namespace as `<env>`)"},
		Recommended:    dialects.StrategyTable,
		Claim:          dialects.ClaimOptimistic,
		ClaimNote:      "no rows to claim",
		Listing:        dialects.Feature{Status: dialects.FeatureYes, Detail: "SCAN by key prefix (never KEYS), every master of a Cluster"},
		Kill:           dialects.Feature{Status: dialects.FeatureNo, Detail: "no sessions to end; a lease is released under the owner check by script, or by " + string(dialects.TermForceRelease)},
		Privileges:     []string{"EVAL, EVALSHA, SCRIPT LOAD, SCAN, INFO, TIME (CONFIG GET optional: persistence check; SUBSCRIBE and PUBLISH on the lock keys' channels: waiting without polling)"},
		Verified:       dialects.VerifiedLive,
		VerifiedDetail: "the conformance suite, the ShedLock race and the fault tests run on a throwaway redis-server when `SCHEDLOCK_TEST_REDIS_DSN` is set",
		Notes: []string{
			"replication is asynchronous: a failover can lose a lock; pass the fencing token to the resource",
			"a store that evicts keys (maxmemory with a policy other than noeviction) is refused",
			"without persistence a restart frees every lock; the holder finds out at its next refresh, and the next holder's token is higher (the server's clock is its floor)",
		},
	},
}
