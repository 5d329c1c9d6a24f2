package zookeeper

import "github.com/schedlock/schedlock/dialects"

// supportRows are this backend's rows of the support table (the
// Dialect's Support).
var supportRows = []dialects.ProductSupport{
	{
		Dialect:        Name,
		Product:        Product,
		Name:           "Apache ZooKeeper (`zk://host:2181[,host2:2181]/chroot`)",
		Versions:       "3.4 and later (persistent and ephemeral sequential nodes, multi transactions); srvr detection since 3.5; verified on 3.8",
		Session:        dialects.Feature{Status: dialects.FeatureNo, Detail: "the ephemeral-node lock is offered as the table strategy, with a lease bound and at-least"},
		Table:          dialects.Feature{Status: dialects.FeatureYes, Detail: "Curator's InterProcessMutex recipe: ephemeral sequential `_c_<uuid>-lock-<seq>` nodes, lowest sequence holds; the sequence is the fencing token; lost at once on disconnection or session expiry"},
		Recommended:    dialects.StrategyTable,
		Claim:          dialects.ClaimOptimistic,
		ClaimNote:      "no task rows to claim",
		Listing:        dialects.Feature{Status: dialects.FeatureYes, Detail: "every lock name under the table node, holder and waiters with their sessions, Curator's holders included"},
		Kill:           dialects.Feature{Status: dialects.FeatureNo, Detail: "no session can be ended from outside; " + string(dialects.TermForceRelease) + " deletes the holder's lock node"},
		Privileges:     []string{"create, delete, read and write on the chroot (the node's ACL)"},
		Verified:       dialects.VerifiedLive,
		VerifiedDetail: "the conformance suite and the fault tests run against a throwaway ZooKeeper in every test run",
		Notes: []string{
			"a Curator InterProcessMutex on <chroot>/<table>/<name> and schedlock exclude each other; Curator peers do not honour at-least",
			"lock names are node names: `/`, `%`, control characters and characters beyond U+FFFF are written %XX",
		},
	},
}
