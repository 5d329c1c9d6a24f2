package mysql

import "github.com/schedlock/schedlock/dialects"

// TiDB facts (docs/dialects.md, TiDB):
//
//   - SELECT … FOR UPDATE SKIP LOCKED is parsed but takes no lock, so two
//     workers claim the same row; claims on TiDB are optimistic whatever a
//     probe seems to show (a probe can pass by luck, and a release that
//     fixes it cannot be told from one that does not by a single run).
//   - GET_LOCK's timeout is clamped to [1 s, 3600 s], so a try waits at
//     least a second, and IS_USED_LOCK cannot name the holder; the session
//     strategy is refused (sessionSupport) and the lease table is used.
const tidbClaimReason = "TiDB parses SELECT … FOR UPDATE SKIP LOCKED but takes no lock, so it is never trusted, whatever the probe shows; " +
	"claim with UPDATE … WHERE version = ? and check the rows affected"

// claimFor is the claim strategy a product's facts impose, or "" when the
// probe decides (skip-locked where SKIP LOCKED works, else optimistic).
func claimFor(info dialects.Info) (dialects.ClaimStrategy, string) {
	if info.Product == dialects.ProductTiDB {
		return dialects.ClaimOptimistic, tidbClaimReason
	}
	return "", ""
}

// auroraNote is added to the recommendation on Aurora MySQL.
const auroraNote = "; on Aurora connect through the cluster (writer) endpoint: a reader instance's GET_LOCK locks are its own, " +
	"so nodes on different readers would all get the lock, and a failover drops the connection, which ends the lock (the holder is told)"
