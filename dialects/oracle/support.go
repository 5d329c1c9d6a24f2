package oracle

import "github.com/schedlock/schedlock/dialects"

// supportRows are this backend's rows of the support table (the
// Dialect's Support).
var supportRows = []dialects.ProductSupport{
	{
		Dialect:  Name,
		Product:  Product,
		Name:     "Oracle Database",
		Versions: "11g Release 2 to 23ai / 26ai (Enterprise, Standard, Express, Free, Autonomous)",
		Session: dialects.Feature{Status: dialects.FeatureIfProven,
			Detail: "`DBMS_LOCK.ALLOCATE_UNIQUE` + `REQUEST` (exclusive, timeout 0, `release_on_commit => FALSE`) and `RELEASE`, return codes 0–5 mapped to typed errors; " +
				"a waiting acquire waits on the server (`REQUEST` with a timeout in whole seconds, the wait rounded up, granted the moment the holder releases, ended by a break when the context is cancelled); " +
				"blocks prepared once per lock connection, one round trip each; " +
				"used when detection proves `EXECUTE` on `SYS.DBMS_LOCK`, refused with the GRANT otherwise"},
		Table: dialects.Feature{Status: dialects.FeatureYes,
			Detail: "`MERGE INTO … USING (SELECT … FROM dual)` on `SYS_EXTRACT_UTC(SYSTIMESTAMP)`; ORA-00001 from a concurrent insert means held"},
		Recommended:     dialects.StrategySession,
		RecommendedWhen: "when `EXECUTE` on `SYS.DBMS_LOCK` is granted; the lease table otherwise",
		Claim:           dialects.ClaimSkipLocked,
		ClaimNote:       "SKIP LOCKED is documented from 11.1; never with `ROWNUM` or `FETCH FIRST` (ORA-02014), which filter before locking",
		Listing: dialects.Feature{Status: dialects.FeatureYes,
			Detail: "`GV$LOCK` type `UL` ⨝ `SYS.DBMS_LOCK_ALLOCATED` ⨝ `GV$SESSION`, every instance of a RAC cluster"},
		Kill: dialects.Feature{Status: dialects.FeatureYes,
			Detail: "`ALTER SYSTEM KILL SESSION 'sid,serial#,@inst_id' IMMEDIATE`; a session only marked for kill (ORA-00031) keeps its locks until it really ends, and Kill says so"},
		Privileges: []string{
			"session strategy: `GRANT EXECUTE ON SYS.DBMS_LOCK TO <user>`",
			"table strategy: `GRANT CREATE TABLE TO <user>` and a quota on its tablespace (or the table created in advance)",
			"listing: `GRANT SELECT ON SYS.GV_$LOCK`, `SYS.GV_$SESSION` and `SYS.DBMS_LOCK_ALLOCATED`",
			"kill: `GRANT ALTER SYSTEM TO <user>` (Amazon RDS: `rdsadmin.rdsadmin_util.kill`)",
		},
		Verified:       dialects.VerifiedSimulated,
		VerifiedDetail: "golden SQL for every statement and a simulator answering with go-ora's error type and DBMS_LOCK's return codes (the server-side wait included: a request blocked until the holder's release, its timeout, its cancellation); never run against a live server here; the live suite runs with `SCHEDLOCK_TEST_ORACLE_DSN`",
		Notes: []string{
			"`ALLOCATE_UNIQUE` commits: it runs only on the lock's own connection",
			"the release name (11g, 19c, 23ai) is never parsed; the version comes from `PRODUCT_COMPONENT_VERSION`",
		},
	},
}
