package postgres

import "github.com/schedlock/schedlock/dialects"

// cockroachClaimReason says why claims on CockroachDB are optimistic.
const cockroachClaimReason = "CockroachDB's FOR UPDATE locks are best-effort (unreplicated: a lease transfer or a node restart drops them), " +
	"so SKIP LOCKED may hand one row to two workers; claim with UPDATE … WHERE version = ? and check the rows affected"

// claimFor is the claim strategy a product's facts impose, or "" when the
// probe decides (skip-locked where SKIP LOCKED works, else optimistic).
func claimFor(info dialects.Info) (dialects.ClaimStrategy, string) {
	if info.Product == dialects.ProductCockroachDB {
		return dialects.ClaimOptimistic, cockroachClaimReason
	}
	return "", ""
}
