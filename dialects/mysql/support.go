package mysql

import "github.com/schedlock/schedlock/dialects"

// Texts shared by the rows of the MySQL family.
const (
	getLockSession = "`GET_LOCK(name, 0)` on a pinned connection, `RELEASE_LOCK` on the same one, `IS_USED_LOCK(name) = CONNECTION_ID()` checked every second; " +
		"names over 64 characters or 192 bytes mapped to a prefix and a SHA-256 suffix"
	oduTable = "`INSERT … ON DUPLICATE KEY UPDATE` whose assignments take over only an expired lease, outcome read from `LAST_INSERT_ID(expr)`; " +
		"now = `UTC_TIMESTAMP(3)`"
	myListing = "`performance_schema.metadata_locks` (`USER LEVEL LOCK`) ⨝ `threads`, needs the `wait/lock/metadata/sql/mdl` instrument " +
		"(off by default in 5.7); without it " + string(dialects.TermFindLock) + " still finds a holder with `IS_USED_LOCK`"
	myKill           = "`KILL <connection id>`; the holder's GET_LOCK locks are freed"
	myTablePrivilege = "table strategy: `CREATE` on the database to create the table, then SELECT, INSERT, UPDATE on it"
	myListPrivilege  = "listing: `GRANT SELECT ON performance_schema.* TO <user>`"
	myClaimNote      = "where the probe proves SKIP LOCKED (MySQL 8.0.1+, MariaDB 10.6+); else optimistic"
)

// supportRows are this backend's rows of the support table (the
// Dialect's Support).
var supportRows = []dialects.ProductSupport{
	{
		Dialect:         Name,
		Product:         dialects.ProductMySQL,
		Name:            "MySQL",
		Versions:        "5.7.5+ and 8.x (Percona Server too); session locks refused before 5.7.5",
		Session:         dialects.Feature{Status: dialects.FeatureYes, Detail: getLockSession},
		Table:           dialects.Feature{Status: dialects.FeatureYes, Detail: oduTable},
		Recommended:     dialects.StrategySession,
		RecommendedWhen: "the lease table before 5.7.5, where a second GET_LOCK silently released the first",
		Claim:           dialects.ClaimSkipLocked,
		ClaimNote:       myClaimNote,
		Listing:         dialects.Feature{Status: dialects.FeatureSomeVersions, Detail: myListing},
		Kill:            dialects.Feature{Status: dialects.FeatureYes, Detail: myKill},
		Privileges: []string{"session strategy: none", myTablePrivilege, myListPrivilege,
			"kill: `GRANT CONNECTION_ADMIN ON *.* TO <user>` (MySQL 8; `SUPER` on 5.7) for other users' sessions"},
		Verified: dialects.VerifiedGolden,
		VerifiedDetail: "the statements are MariaDB's, which run live; MySQL's own paths (collation `utf8mb4_0900_bin`, NOWAIT error 3572, `@@transaction_isolation`) are unit-tested; " +
			"point `SCHEDLOCK_TEST_MYSQL_DSN` at a MySQL server to run the suite on it",
		Notes: []string{"GET_LOCK names longer than 64 characters fail with error 3057; schedlock maps them"},
	},
	{
		Dialect:         Name,
		Product:         dialects.ProductMariaDB,
		Name:            "MariaDB",
		Versions:        "10.0.2+ and 11.x; session locks refused before 10.0.2",
		Session:         dialects.Feature{Status: dialects.FeatureYes, Detail: getLockSession},
		Table:           dialects.Feature{Status: dialects.FeatureYes, Detail: oduTable + "; the name column uses `utf8mb4_nopad_bin` from 10.2.2"},
		Recommended:     dialects.StrategySession,
		RecommendedWhen: "the lease table before 10.0.2",
		Claim:           dialects.ClaimSkipLocked,
		ClaimNote:       myClaimNote,
		Listing: dialects.Feature{Status: dialects.FeatureSomeVersions,
			Detail: "`information_schema.METADATA_LOCK_INFO` from the `metadata_lock_info` plugin, or `performance_schema.metadata_locks` from 10.5.2 with the MDL instrument on"},
		Kill: dialects.Feature{Status: dialects.FeatureYes, Detail: myKill},
		Privileges: []string{"session strategy: none", myTablePrivilege,
			"listing: `INSTALL SONAME 'metadata_lock_info'` once (or performance_schema as for MySQL)",
			"kill: `GRANT CONNECTION ADMIN ON *.* TO <user>` (10.5.2+; `SUPER` before) for other users' sessions"},
		Verified:       dialects.VerifiedLive,
		VerifiedDetail: "MariaDB 10.11 (`SCHEDLOCK_TEST_MYSQL_DSN`): the conformance suite on both strategies and every preset, the probe, kill and listing",
	},
	{
		Dialect:  Name,
		Product:  dialects.ProductTiDB,
		Name:     "TiDB",
		Versions: "current releases (v7–v8); older ones untested",
		Session: dialects.Feature{Status: dialects.FeatureNo,
			Detail: "refused: `GET_LOCK` clamps its timeout to at least 1 s (a try waits a second) and `IS_USED_LOCK` cannot name the holder"},
		Table:          dialects.Feature{Status: dialects.FeatureYes, Detail: oduTable},
		Recommended:    dialects.StrategyTable,
		Claim:          dialects.ClaimOptimistic,
		ClaimNote:      tidbClaimReason,
		Listing:        dialects.Feature{Status: dialects.FeatureNo, Detail: "TiDB cannot list user locks; `locks ls` lists the lease table"},
		Kill:           dialects.Feature{Status: dialects.FeatureNo, Detail: "no session locks to free; " + string(dialects.TermForceRelease) + " ends a lease in the table"},
		Privileges:     []string{myTablePrivilege},
		Verified:       dialects.VerifiedGolden,
		VerifiedDetail: "MySQL-family statements (live on MariaDB 10.11); TiDB's refusals and claim advice are unit-tested; never run on TiDB",
		Notes: []string{
			"the insert id that `LAST_INSERT_ID(expr)` sets inside `ON DUPLICATE KEY UPDATE` has differed between TiDB releases: run `schedlock selfcheck` before relying on the table strategy",
			"FOR UPDATE blocks only in pessimistic transactions; the row-lock probe begins with `BEGIN PESSIMISTIC`",
		},
	},
	{
		Dialect:         Name,
		Product:         dialects.ProductMySQL,
		Variant:         VariantAurora,
		Name:            "Aurora MySQL",
		Versions:        "Aurora MySQL 2 (MySQL 5.7) and 3 (MySQL 8.0), detected by `AURORA_VERSION()`",
		Session:         dialects.Feature{Status: dialects.FeatureYes, Detail: getLockSession},
		Table:           dialects.Feature{Status: dialects.FeatureYes, Detail: oduTable},
		Recommended:     dialects.StrategySession,
		RecommendedWhen: "connect through the cluster (writer) endpoint: a reader instance's GET_LOCK locks are its own, and its tables are read-only",
		Claim:           dialects.ClaimSkipLocked,
		ClaimNote:       myClaimNote,
		Listing:         dialects.Feature{Status: dialects.FeatureSomeVersions, Detail: myListing},
		Kill: dialects.Feature{Status: dialects.FeatureSomeVersions,
			Detail: "`KILL <connection id>` for the user's own sessions; others' need `CALL mysql.rds_kill(id)`, which schedlock does not call (unverified)"},
		Privileges:     []string{"session strategy: none", myTablePrivilege, myListPrivilege},
		Verified:       dialects.VerifiedGolden,
		VerifiedDetail: "MySQL-family statements (live on MariaDB 10.11); Aurora detection is unit-tested; never run on Aurora",
		Notes:          []string{"a failover drops every connection: session locks end and their holders are told (Lease.Done)"},
	},
}
