package etcd

import "github.com/schedlock/schedlock/dialects"

// supportRows are this backend's rows of the support table (the
// Dialect's Support).
var supportRows = []dialects.ProductSupport{
	{
		Dialect:        Name,
		Product:        Product,
		Name:           "etcd (`etcd://host:2379/prefix`, `etcds://`)",
		Versions:       "3.4 and later",
		Session:        dialects.Feature{Status: dialects.FeatureNo, Detail: "no session locks: its locks are leases"},
		Table:          dialects.Feature{Status: dialects.FeatureYes, Detail: "a key per lock in concurrency.Mutex's layout (shared with `etcdctl lock`), bound to a lease of at-most; the token is the key's create revision"},
		Recommended:    dialects.StrategyTable,
		Claim:          dialects.ClaimOptimistic,
		ClaimNote:      "no rows to claim",
		Listing:        dialects.Feature{Status: dialects.FeatureYes, Detail: "one prefix read: holders (schedlock's and etcdctl's) and the clients queued behind them"},
		Kill:           dialects.Feature{Status: dialects.FeatureNo, Detail: "no sessions to end; a lock's key is deleted under its revision guard, or by " + string(dialects.TermForceRelease)},
		Privileges:     []string{"read and write on the DSN's key prefix (with etcd auth: a role with readwrite on that prefix)"},
		Verified:       dialects.VerifiedLive,
		VerifiedDetail: "the conformance suite, the etcdctl lock interop and the fault tests run on a throwaway etcd in every test run",
		Notes:          []string{"lease TTLs are whole seconds on the server: at-most is rounded up, and raised to the server's minimum lease TTL, for a holder that dies"},
	},
}
