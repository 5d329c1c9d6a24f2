package nats

import "github.com/schedlock/schedlock/dialects"

// supportRows are this backend's rows of the support table.
var supportRows = []dialects.ProductSupport{
	{
		Dialect:  Name,
		Product:  Product,
		Name:     "NATS JetStream KV (`nats://host:4222/BUCKET`, `tls://`)",
		Versions: "2.9 and later",
		Session:  dialects.Feature{Status: dialects.FeatureNo, Detail: "no session locks: its locks are leases"},
		Table: dialects.Feature{Status: dialects.FeatureYes, Detail: "a key per lock in a KV bucket, written under revision checks; the token is the KV revision of the acquire; " +
			"presets `schedlock` (JSON values, lease ends on the server's write time) and `shedlock` (ShedLock's bucket `shedlock-locks`, the name as the key, an 8-byte lease end; schedlock's owner and token in headers ShedLock ignores)"},
		Recommended:    dialects.StrategyTable,
		Claim:          dialects.ClaimOptimistic,
		ClaimNote:      "no rows to claim",
		Listing:        dialects.Feature{Status: dialects.FeatureYes, Detail: "four requests per bucket (stream info with the server's clock, a consumer of the last value per key, one fetch, its delete), the DSN's bucket and ShedLock's"},
		Kill:           dialects.Feature{Status: dialects.FeatureNo, Detail: "no sessions to end; a lock's key is deleted under its revision guard, or by " + string(dialects.TermForceRelease)},
		Privileges:     []string{"publish and subscribe on the bucket's KV subjects and the JetStream API"},
		Verified:       dialects.VerifiedLive,
		VerifiedDetail: "the conformance suite, the ShedLock race and the fault tests run on an embedded nats-server 2.15 in every test run, and on the Debian package's when `SCHEDLOCK_TEST_NATS_DSN` is set",
		Notes: []string{
			"JetStream acknowledges writes before they reach disk by default (sync every 2 minutes): losing the server's machine can lose a lock write (risk async-fsync)",
			"a bucket that expires (a TTL) or drops (discard old with limits) its entries is refused; ShedLock creates its bucket in memory, which a restart forgets (risk no-persistence)",
		},
	},
}
