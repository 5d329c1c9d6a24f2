package sqlserver

import "github.com/schedlock/schedlock/dialects"

// Texts shared by the SQL Server rows.
const (
	applockSession = "`sp_getapplock` with `@LockOwner = 'Session'`, `@LockTimeout = 0` for a try, every return code mapped (0 and 1 granted, -1 held, -2/-3/-999 errors); " +
		"a waiting acquire waits on the server (`@LockTimeout` = the wait in ms, granted the moment the holder releases, ended by an attention when the context is cancelled); " +
		"statements prepared once per lock connection, one round trip each; " +
		"`APPLOCK_MODE` for is-held; names over 255 characters mapped, and kept to 32 characters where they must stay listable"
	mergeTable = "`MERGE … WITH (HOLDLOCK) … OUTPUT inserted.token` on `SYSUTCDATETIME()`; errors 2627 and 2601 from a concurrent insert mean held"
	dmListing  = "`sys.dm_tran_locks` (`APPLICATION`) ⨝ `sys.dm_exec_sessions` in the current database"
	killDetail = "`KILL <session_id>`; waits until the session is gone"
	readPast   = "`WITH (UPDLOCK, READPAST, ROWLOCK)`, plus `READCOMMITTEDLOCK` under READ_COMMITTED_SNAPSHOT, where READPAST is refused otherwise"
)

// supportRows are this backend's rows of the support table (the
// Dialect's Support).
var supportRows = []dialects.ProductSupport{
	{
		Dialect:     Name,
		Product:     Product,
		Name:        "SQL Server",
		Versions:    "2012–2022 (Windows, Linux, containers) and Azure SQL Managed Instance",
		Session:     dialects.Feature{Status: dialects.FeatureYes, Detail: applockSession},
		Table:       dialects.Feature{Status: dialects.FeatureYes, Detail: mergeTable},
		Recommended: dialects.StrategySession,
		Claim:       dialects.ClaimReadPast,
		ClaimNote:   readPast,
		Listing:     dialects.Feature{Status: dialects.FeatureYes, Detail: dmListing},
		Kill:        dialects.Feature{Status: dialects.FeatureYes, Detail: killDetail},
		Privileges: []string{
			"session strategy: none (`public`)",
			"table strategy: `GRANT CREATE TABLE TO [user]; GRANT ALTER ON SCHEMA::[dbo] TO [user]`, then SELECT, INSERT, UPDATE on the table",
			"listing: `USE master; GRANT VIEW SERVER STATE TO [login]`",
			"kill: `USE master; GRANT ALTER ANY CONNECTION TO [login]`",
		},
		Verified:       dialects.VerifiedSimulated,
		VerifiedDetail: "golden SQL for every statement and a simulator answering with go-mssqldb's error type and sp_getapplock's return codes (the server-side wait included: a request blocked until the holder's release, its timeout, its cancellation); never run against a live server here; the live suite runs with `SCHEDLOCK_TEST_SQLSERVER_DSN`",
		Notes:          []string{"application locks are per database and case-sensitive; `sys.dm_tran_locks` shows only the first 32 characters of a name"},
	},
	{
		Dialect:         Name,
		Product:         Product,
		Variant:         VariantAzureSQLDatabase,
		Name:            "Azure SQL Database",
		Versions:        "every service tier (engine edition 5)",
		Session:         dialects.Feature{Status: dialects.FeatureYes, Detail: applockSession},
		Table:           dialects.Feature{Status: dialects.FeatureYes, Detail: mergeTable},
		Recommended:     dialects.StrategySession,
		RecommendedWhen: "READ_COMMITTED_SNAPSHOT, on by default, is detected and reported; it leaves both lock strategies alone",
		Claim:           dialects.ClaimReadPast,
		ClaimNote:       readPast,
		Listing:         dialects.Feature{Status: dialects.FeatureYes, Detail: dmListing},
		Kill:            dialects.Feature{Status: dialects.FeatureYes, Detail: killDetail},
		Privileges: []string{
			"session strategy: none",
			"table strategy: `GRANT CREATE TABLE TO [user]; GRANT ALTER ON SCHEMA::[dbo] TO [user]`",
			"listing: `GRANT VIEW DATABASE STATE TO [user]` (Basic and Standard tiers: the server admin)",
			"kill: `GRANT KILL DATABASE CONNECTION TO [user]`",
		},
		Verified:       dialects.VerifiedSimulated,
		VerifiedDetail: "the SQL Server simulator with engine edition 5 and READ_COMMITTED_SNAPSHOT on",
	},
	{
		Dialect:         Name,
		Product:         Product,
		Variant:         VariantAzureSynapse,
		Name:            "Azure Synapse",
		Versions:        "dedicated and serverless SQL pools (engine editions 6 and 11)",
		Session:         dialects.Feature{Status: dialects.FeatureNo, Detail: "no `sp_getapplock`"},
		Table:           dialects.Feature{Status: dialects.FeatureNo, Detail: "no `OUTPUT` clause; keep the locks in an Azure SQL Database or SQL Server"},
		Recommended:     dialects.StrategyTable,
		RecommendedWhen: "both lockers refuse with the reason; the table is named only because it is the portable fallback elsewhere",
		Listing:         dialects.Feature{Status: dialects.FeatureNo},
		Kill:            dialects.Feature{Status: dialects.FeatureNo},
		Verified:        dialects.VerifiedGolden,
		VerifiedDetail:  "detection and the refusals are unit-tested",
	},
}
