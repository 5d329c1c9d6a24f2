package dameng

import "github.com/schedlock/schedlock/dialects"

// supportRows are this backend's rows of the support table (the
// Dialect's Support).
var supportRows = []dialects.ProductSupport{
	{
		Dialect:  Name,
		Product:  Product,
		Name:     "Dameng DM8",
		Versions: "DM8 (every `COMPATIBLE_MODE`); driver `gitee.com/chunanyong/dm` only in builds with `-tags dameng`",
		Session: dialects.Feature{Status: dialects.FeatureIfProven,
			Detail: "`SYS.DBMS_LOCK` (`ALLOCATE_UNIQUE`, `REQUEST` mode 6 timeout 0 `release_on_commit` FALSE, `RELEASE`), only where detection finds the package in `ALL_OBJECTS`; otherwise refused with `CALL SP_CREATE_SYSTEM_PACKAGES(1, 'DBMS_LOCK')`; " +
				"a waiting acquire waits on the server (`REQUEST` with a timeout in whole seconds, the wait rounded up, granted the moment the holder releases); blocks prepared once per lock connection"},
		Table: dialects.Feature{Status: dialects.FeatureYes,
			Detail: "`MERGE INTO … USING (SELECT … FROM DUAL)` on `SYS_EXTRACT_UTC(SYSTIMESTAMP)`; duplicate key -6602 (and -6610/-6611/-6612/-6625) means held"},
		Recommended:     dialects.StrategyTable,
		RecommendedWhen: "session when `DBMS_LOCK` is installed and the two-connection probe proves it excludes",
		Claim:           dialects.ClaimOptimistic,
		ClaimNote:       "SKIP LOCKED on DM8 is unverified; claim with `UPDATE … WHERE version = ?`",
		Listing: dialects.Feature{Status: dialects.FeatureIfProven,
			Detail: "`V$LOCK` ⨝ `SYS.DBMS_LOCK_ALLOCATED` ⨝ `V$SESSIONS` (how DBMS_LOCK locks show in `V$LOCK` is unverified)"},
		Kill: dialects.Feature{Status: dialects.FeatureYes, Detail: "`CALL SP_CLOSE_SESSION(sess_id)`, then waits until the session leaves `V$SESSIONS`"},
		Privileges: []string{
			"table strategy: the table, or `CREATE TABLE`",
			"session strategy: `CALL SP_CREATE_SYSTEM_PACKAGES(1, 'DBMS_LOCK')` run once by a DBA; `GRANT EXECUTE ON SYS.DBMS_LOCK` where PUBLIC lacks it",
			"listing: SELECT on `V$LOCK`, `V$SESSIONS`, `SYS.DBMS_LOCK_ALLOCATED`",
			"kill: DBA to call `SP_CLOSE_SESSION` on another user's session",
		},
		Verified:       dialects.VerifiedSimulated,
		VerifiedDetail: "golden SQL for every statement and a simulator with the driver's error shape (`ErrCode`, `Error <code>:`) (the server-side wait included: a request blocked until the holder's release, its timeout, its cancellation); never run against a live server here; live suite runs with `SCHEDLOCK_TEST_DAMENG_DSN` and `-tags dameng`",
		Notes: []string{
			"DM8 creates `DBMS_LOCK` only on request: a fresh database has no session locks",
			"the driver appends a stack trace to every error text; schedlock reads the code from the error, not the text alone",
			"unquoted table names are stored upper case",
		},
	},
}
