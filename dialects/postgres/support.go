package postgres

import "github.com/schedlock/schedlock/dialects"

// Texts shared by the rows of the PostgreSQL family.
const (
	advisorySession = "`pg_try_advisory_lock(key)` on a pinned connection, key = the first 8 bytes of SHA-256 of the name; " +
		"`pg_advisory_unlock` on the same connection; `pg_locks` checked every second"
	onConflictTable = "`INSERT … ON CONFLICT (name) DO UPDATE … WHERE lock_until <= now RETURNING`, now = `clock_timestamp()` in UTC to the millisecond; " +
		"statements aborted with SQLSTATE 40001 or 40P01 are sent again (at most 4 times)"
	pgListing = "advisory locks from `pg_locks` ⨝ `pg_stat_activity` in the current database; names shown where the caller names them " +
		"(a key cannot be turned back into a name)"
	pgKill           = "`pg_terminate_backend(pid)`, then waits until the backend has left `pg_stat_activity`"
	pgTablePrivilege = "table strategy: `CREATE` on the schema to create the table (or have it created in advance), then SELECT, INSERT, UPDATE on it"
	pgKillPrivilege  = "kill: superuser, or `GRANT pg_signal_backend TO <user>` (a superuser's session only by a superuser)"
	pgListPrivilege  = "listing: none; `GRANT pg_read_all_stats TO <user>` shows other users' client address"
	skipLockedProbed = "where the probe proves SKIP LOCKED (it locks a row on one connection and reads past it on another); else optimistic"
)

// supportRows are this backend's rows of the support table (the
// Dialect's Support).
var supportRows = []dialects.ProductSupport{
	{
		Dialect:         Name,
		Product:         dialects.ProductPostgreSQL,
		Name:            "PostgreSQL",
		Versions:        "9.6–17 (the pgx driver supports 14 and later)",
		Session:         dialects.Feature{Status: dialects.FeatureYes, Detail: advisorySession},
		Table:           dialects.Feature{Status: dialects.FeatureYes, Detail: onConflictTable},
		Recommended:     dialects.StrategySession,
		RecommendedWhen: "use " + string(dialects.TermStrategyTable) + " behind PgBouncer in transaction pooling mode, where a session lock lands on a random server connection",
		Claim:           dialects.ClaimSkipLocked,
		ClaimNote:       "SKIP LOCKED since 9.5, " + skipLockedProbed,
		Listing:         dialects.Feature{Status: dialects.FeatureYes, Detail: pgListing},
		Kill:            dialects.Feature{Status: dialects.FeatureYes, Detail: pgKill},
		Privileges:      []string{"session strategy: none", pgTablePrivilege, pgListPrivilege, pgKillPrivilege},
		Verified:        dialects.VerifiedLive,
		VerifiedDetail: "PostgreSQL 15 (`SCHEDLOCK_TEST_POSTGRES_DSN`): the conformance suite on both strategies and every preset, the probe, " +
			"kill, listing, and a real SQLSTATE 40001 retried",
		Notes: []string{
			"`DISCARD ALL` (a common pooler reset query) runs `pg_advisory_unlock_all()`",
			"advisory locks stack within a session and survive COMMIT and ROLLBACK; schedlock takes each on its own connection, once",
			"on a hot standby advisory locks are local to that standby: point schedlock at the primary",
		},
	},
	{
		Dialect:  Name,
		Product:  dialects.ProductKingbase,
		Name:     "KingbaseES",
		Versions: "V8R6 in pg, oracle and mysql compatibility modes (`Info.Mode` from `SHOW database_mode`)",
		Session: dialects.Feature{Status: dialects.FeatureIfProven,
			Detail: "advisory locks under the names detection finds (`pg_try_advisory_lock` or `sys_try_advisory_lock`, `pg_locks` or `sys_locks`), " +
				"used only when the two-connection probe at detection proves that a second session is refused; refused otherwise, with the reason"},
		Table:           dialects.Feature{Status: dialects.FeatureYes, Detail: onConflictTable},
		Recommended:     dialects.StrategyTable,
		RecommendedWhen: "session when detection proved the advisory locks; `detect` shows the mode, the names found and the proof",
		Claim:           dialects.ClaimSkipLocked,
		ClaimNote:       skipLockedProbed,
		Listing: dialects.Feature{Status: dialects.FeatureIfProven,
			Detail: "the probe reads `pg_locks`/`sys_locks` ⨝ `pg_stat_activity`/`sys_stat_activity` under the names found; " +
				"`locks ls` reads the `pg_` views, so a KingbaseES without them lists table locks only"},
		Kill: dialects.Feature{Status: dialects.FeatureYes,
			Detail: "`pg_terminate_backend` or `sys_terminate_backend`, whichever detection found, then waits for the session to leave the activity view"},
		Privileges: []string{
			"session strategy: none expected (PostgreSQL grants the advisory lock functions to PUBLIC; unverified on KingbaseES)",
			pgTablePrivilege,
			"kill: a superuser, or KingbaseES's counterpart of `pg_signal_backend` (its name is not probed)",
		},
		Verified: dialects.VerifiedSimulated,
		VerifiedDetail: "simulator with pg_ and sys_ catalogs, every mode, stub and missing lock functions (`dialects/postgres/pgsim_test.go`); " +
			"the detection probes also run live on PostgreSQL 15; the live suite runs with `SCHEDLOCK_TEST_KINGBASE_DSN`",
		Notes: []string{
			"whether pgx logs in with KingbaseES's default password method is unverified; a refused method gets the same explanation as openGauss",
			"the `ON CONFLICT` lease-table SQL is PostgreSQL's; its acceptance in oracle and mysql modes is unverified: run `schedlock selfcheck`",
			"DBMS_LOCK of oracle mode (`CREATE EXTENSION dbms_lock`) is not used",
		},
	},
	{
		Dialect:  Name,
		Product:  dialects.ProductOpenGauss,
		Name:     "openGauss",
		Versions: "3.x and 5.x (based on PostgreSQL 9.2)",
		Session: dialects.Feature{Status: dialects.FeatureIfProven,
			Detail: "`pg_try_advisory_lock`, used only when the two-connection probe at detection proves it excludes"},
		Table: dialects.Feature{Status: dialects.FeatureYes,
			Detail: "`INSERT … ON DUPLICATE KEY UPDATE … WHERE lock_until <= now` (openGauss has no `ON CONFLICT`), outcome by rows affected, " +
				"token read back; a duplicate key (23505) means held"},
		Recommended:     dialects.StrategyTable,
		RecommendedWhen: "session when detection proved the advisory locks",
		Claim:           dialects.ClaimSkipLocked,
		ClaimNote:       "SKIP LOCKED arrived around 3.1/5.0; " + skipLockedProbed,
		Listing:         dialects.Feature{Status: dialects.FeatureYes, Detail: pgListing},
		Kill:            dialects.Feature{Status: dialects.FeatureYes, Detail: pgKill},
		Privileges:      []string{"session strategy: none", pgTablePrivilege, "kill: sysadmin (unverified)"},
		Verified:        dialects.VerifiedSimulated,
		VerifiedDetail:  "simulator answering the `ON DUPLICATE KEY UPDATE` acquire with rows affected; the authentication error against the real pgx driver and a scripted server",
		Notes: []string{
			"openGauss logs in with SHA256 (authentication code 10), MD5_SHA256 (11) or SM3 (13), which pgx cannot answer: detection says so and how to fix it " +
				"(`password_encryption_type = 1`, md5 in `pg_hba.conf`, set the password again)",
			"`ON DUPLICATE KEY UPDATE … WHERE` and its row count are taken from openGauss's documentation and test suite, not from a server",
		},
	},
	{
		Dialect:  Name,
		Product:  dialects.ProductCockroachDB,
		Name:     "CockroachDB",
		Versions: "current releases (v23–v24); older ones untested",
		Session: dialects.Feature{Status: dialects.FeatureNo,
			Detail: "`pg_try_advisory_lock` is a stub that always answers true; the session locker refuses and the probe shows the stub"},
		Table:       dialects.Feature{Status: dialects.FeatureYes, Detail: onConflictTable},
		Recommended: dialects.StrategyTable,
		Claim:       dialects.ClaimOptimistic,
		ClaimNote:   cockroachClaimReason,
		Listing:     dialects.Feature{Status: dialects.FeatureNo, Detail: "no real advisory locks to list; `locks ls` lists the lease table"},
		Kill:        dialects.Feature{Status: dialects.FeatureNo, Detail: "no session locks to free; " + string(dialects.TermForceRelease) + " ends a lease in the table"},
		Privileges:  []string{"table strategy: `CREATE` on the database or schema, then SELECT, INSERT, UPDATE on the table"},
		Verified:    dialects.VerifiedSimulated,
		VerifiedDetail: "simulator with stub advisory functions and 40001 aborts on every third write (the suite passes only through the retry); " +
			"the retry also proven live against a real 40001 from PostgreSQL 15",
		Notes: []string{"transactions run SERIALIZABLE: SQLSTATE 40001 is routine, 40003 (outcome unknown) is never retried"},
	},
	{
		Dialect:  Name,
		Product:  dialects.ProductYugabyteDB,
		Name:     "YugabyteDB",
		Versions: "2.x; session locks from 2025.1",
		Session: dialects.Feature{Status: dialects.FeatureSomeVersions,
			Detail: "advisory locks from 2025.1, where they are generally available; refused before (an error, or in 2.25 previews two sessions holding one key)"},
		Table:           dialects.Feature{Status: dialects.FeatureYes, Detail: onConflictTable},
		Recommended:     dialects.StrategySession,
		RecommendedWhen: "from 2025.1; the lease table before",
		Claim:           dialects.ClaimSkipLocked,
		ClaimNote:       "not under SERIALIZABLE isolation; " + skipLockedProbed,
		Listing:         dialects.Feature{Status: dialects.FeatureYes, Detail: pgListing + "; `pg_stat_activity` is per node, so holders on other nodes may lack details"},
		Kill:            dialects.Feature{Status: dialects.FeatureYes, Detail: pgKill + " (on the node that owns the backend; unverified)"},
		Privileges:      []string{"session strategy: none", pgTablePrivilege, pgKillPrivilege},
		Verified:        dialects.VerifiedGolden,
		VerifiedDetail:  "PostgreSQL's statements (live on PostgreSQL 15); the 2025.1 version gate is unit-tested; never run on YugabyteDB",
		Notes:           []string{"advisory locks can be switched off by a server flag; the lock function then fails and says so"},
	},
	{
		Dialect:         Name,
		Product:         dialects.ProductPostgreSQL,
		Variant:         VariantAurora,
		Name:            "Aurora PostgreSQL",
		Versions:        "every Aurora PostgreSQL release (detected by `aurora_version()`)",
		Session:         dialects.Feature{Status: dialects.FeatureYes, Detail: advisorySession},
		Table:           dialects.Feature{Status: dialects.FeatureYes, Detail: onConflictTable},
		Recommended:     dialects.StrategySession,
		RecommendedWhen: "connect through the cluster (writer) endpoint: a reader instance's advisory locks are its own, and its tables are read-only",
		Claim:           dialects.ClaimSkipLocked,
		ClaimNote:       skipLockedProbed,
		Listing:         dialects.Feature{Status: dialects.FeatureYes, Detail: pgListing},
		Kill:            dialects.Feature{Status: dialects.FeatureYes, Detail: pgKill},
		Privileges:      []string{"session strategy: none", pgTablePrivilege, "kill: `GRANT pg_signal_backend TO <user>` (Aurora has no true superuser)"},
		Verified:        dialects.VerifiedGolden,
		VerifiedDetail:  "PostgreSQL's statements (live on PostgreSQL 15); Aurora detection is unit-tested; never run on Aurora",
		Notes:           []string{"a failover drops every connection: session locks end and their holders are told (Lease.Done)"},
	},
}
