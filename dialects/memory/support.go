package memory

import "github.com/schedlock/schedlock/dialects"

// supportRows are this backend's rows of the support table (the
// Dialect's Support).
var supportRows = []dialects.ProductSupport{
	{
		Dialect:        Name,
		Product:        Product,
		Name:           "in-process memory (`memory://NAME`)",
		Versions:       "every build",
		Session:        dialects.Feature{Status: dialects.FeatureNo, Detail: "no sessions whose end could free a lock"},
		Table:          dialects.Feature{Status: dialects.FeatureYes, Detail: "leases with owner, lease end, at-least and fencing token, kept in this process's memory (one store per NAME)"},
		Recommended:    dialects.StrategyTable,
		Claim:          dialects.ClaimOptimistic,
		ClaimNote:      "no rows to claim",
		Listing:        dialects.Feature{Status: dialects.FeatureYes, Detail: "every lease of the store, in the layout its table was created with (or another whose columns it has)"},
		Kill:           dialects.Feature{Status: dialects.FeatureNo, Detail: "no sessions to end; a lease is released under the owner guard, or by " + string(dialects.TermForceRelease)},
		Privileges:     []string{"none"},
		Verified:       dialects.VerifiedLive,
		VerifiedDetail: "the conformance suite runs on it in every test run",
		Notes:          []string{"process-local: locks exclude only within one process, for tests and examples of the backend kit"},
	},
}
