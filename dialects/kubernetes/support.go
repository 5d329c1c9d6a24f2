package kubernetes

import "github.com/schedlock/schedlock/dialects"

// supportRows are this backend's rows of the support table.
var supportRows = []dialects.ProductSupport{
	{
		Dialect:        Name,
		Product:        Product,
		Name:           "Kubernetes Lease (`k8s://NAMESPACE`, `kubernetes://`)",
		Versions:       "1.14 and later (coordination.k8s.io/v1)",
		Session:        dialects.Feature{Status: dialects.FeatureNo, Detail: "no session locks: its locks are Leases"},
		Table:          dialects.Feature{Status: dialects.FeatureYes, Detail: "a Lease per lock in client-go's leader-election layout, written under resourceVersion checks; the token is leaseTransitions"},
		Recommended:    dialects.StrategyTable,
		Claim:          dialects.ClaimOptimistic,
		ClaimNote:      "no rows to claim",
		Listing:        dialects.Feature{Status: dialects.FeatureYes, Detail: "every Lease of the namespace with its holder, controllers' leader elections included"},
		Kill:           dialects.Feature{Status: dialects.FeatureNo, Detail: "no sessions to end; a Lease's holder is emptied under its resourceVersion, or by " + string(dialects.TermForceRelease)},
		Privileges:     []string{"get, list, create and update on leases.coordination.k8s.io in the namespace (a Role and RoleBinding)"},
		Verified:       dialects.VerifiedLive,
		VerifiedDetail: "the conformance suite, a client-go LeaderElector interop and the fault tests run on a test API server assembled from k8s.io/apiserver (Leases only, over etcd) in every test run, not on a real cluster",
		Notes:          []string{"expiry is judged on each observer's own clock, as client-go does: a lease seen for the first time is taken as expired only when its renewTime plus its duration plus max-skew has passed"},
	},
}
