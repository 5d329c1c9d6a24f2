package oracle

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/oralike"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// Oracle error numbers the row-lock probe reads.
const (
	oraResourceBusy     = 54  // ORA-00054: resource busy and acquire with NOWAIT specified or timeout expired
	oraMissingKeyword   = 905 // ORA-00905: missing keyword
	oraCommandNotEnded  = 933 // ORA-00933: SQL command not properly ended
	oraInvalidStatement = 900 // ORA-00900: invalid SQL statement
)

// Probe statements.
const (
	// privilegesSQL reads the session user and whether the session's
	// system privileges (SESSION_PRIVS: granted directly or through an
	// enabled role) include ALTER SYSTEM, for KILL SESSION, and CREATE
	// TABLE (or CREATE ANY TABLE), for the lock table.
	privilegesSQL = "SELECT SYS_CONTEXT('USERENV', 'SESSION_USER')," +
		" (SELECT COUNT(*) FROM session_privs WHERE privilege = 'ALTER SYSTEM')," +
		" (SELECT COUNT(*) FROM session_privs WHERE privilege IN ('CREATE TABLE', 'CREATE ANY TABLE'))" +
		" FROM dual"
	// lockListingSQL is the listing's join, counted: it proves the user
	// may read every view the listing reads.
	lockListingSQL = "SELECT COUNT(*)" + sessionLockFrom
	// serverNowSQL is SYSTIMESTAMP in UTC as text (microseconds), so the
	// reading does not depend on how the driver maps timestamps.
	serverNowSQL = "SELECT TO_CHAR(SYS_EXTRACT_UTC(SYSTIMESTAMP), 'YYYY-MM-DD HH24:MI:SS.FF6') FROM dual"
)

// Probe implements dialects.ProbeFunc for Oracle. It compiles a reference
// to SYS.DBMS_LOCK (a missing EXECUTE grant makes session locks "no", with
// the GRANT; otherwise dialects.DB.Probe proves them on two connections),
// counts the rows of the listing's join of GV$LOCK, SYS.DBMS_LOCK_ALLOCATED
// and GV$SESSION, reads SESSION_PRIVS for ALTER SYSTEM (kill) and CREATE
// TABLE, and reads SYSTIMESTAMP for the clock skew. Unless opts.ReadOnly or
// CREATE TABLE is missing, it proves SKIP LOCKED and NOWAIT on a probe
// table it creates in the current schema and drops (see rowLockProbe).
// The isolation level is Oracle's default, read committed: Oracle has no
// other default, and no query shows a session's level outside a
// transaction. It changes no setting and leaves nothing behind.
func Probe(ctx context.Context, db *sql.DB, info dialects.Info, opts dialects.ProbeOptions) (dialects.Capabilities, error) {
	var caps dialects.Capabilities
	p := oralike.ReadPrivileges(ctx, db, privilegesSQL, "SESSION_PRIVS")
	if ctx.Err() != nil {
		return caps, ctx.Err()
	}
	access, err := probeDBMSLock(ctx, db, p.User)
	if err != nil {
		return caps, err
	}
	if access.Known && !access.Usable {
		priv := privilegeDBMSLock(access.User, access.Err)
		caps.SessionLocks = dialects.CapNo("this user may not execute SYS.DBMS_LOCK ("+oralike.OneLine(access.Err)+")", "").
			Fixed(dialects.Remedy{Kind: dialects.RemedyGrant, Privilege: priv.Privilege, Statement: priv.Grant}, "; or "+dialects.UseTableStrategy.String())
		caps.MissingPrivileges = append(caps.MissingPrivileges, dialects.MissingPrivilege{
			Privilege: priv.Privilege,
			NeededFor: "the session strategy (DBMS_LOCK.REQUEST and RELEASE)",
			Grant:     priv.Grant,
		})
	}
	caps.Isolation = dialects.CapYes("read committed")
	var missing *dialects.MissingPrivilege
	caps.LockListing, missing = probeLockListing(ctx, db)
	if missing != nil {
		caps.MissingPrivileges = append(caps.MissingPrivileges, *missing)
	}
	caps.KillSessions, missing = killCapability(p)
	if missing != nil {
		caps.MissingPrivileges = append(caps.MissingPrivileges, *missing)
	}
	canCreate := true
	if missing = p.MissingCreateTable(" (and a quota on its default tablespace)"); missing != nil {
		canCreate = false
		caps.MissingPrivileges = append(caps.MissingPrivileges, *missing)
	}
	caps.SkipLocked, caps.NoWait = rowLockFacts(info)
	if err := sqlkit.ProveRowLocks(ctx, db, &caps, opts.ReadOnly, canCreate, rowLockProbe(sqlkit.ProbeTableName()), nil); err != nil {
		return caps, err
	}
	if caps.SkipLocked.Supported {
		caps.Recommended.ClaimStrategy = dialects.ClaimSkipLocked
		caps.Recommended.ClaimReason = "SELECT … FOR UPDATE SKIP LOCKED lets each worker take rows no other worker holds, without waiting; " +
			"open the cursor and fetch n rows, or lock rows by key: ROWNUM <= n filters before locking (a second worker gets no row) and FETCH FIRST n with FOR UPDATE fails (ORA-02014)"
	}
	caps.Clock = sqlkit.MeasureClock(ctx, db, ServerNow)
	return caps, ctx.Err()
}

// ServerNow reads SYS_EXTRACT_UTC(SYSTIMESTAMP), the database host's clock
// in UTC as the statement runs.
func ServerNow(ctx context.Context, conn *sql.Conn) (time.Time, error) {
	var text string
	if err := conn.QueryRowContext(ctx, serverNowSQL).Scan(&text); err != nil {
		return time.Time{}, fmt.Errorf("SYS_EXTRACT_UTC(SYSTIMESTAMP): %w", err)
	}
	return sqlkit.ParseServerTime(text)
}

// probeLockListing proves that the listing's views can be read, or names
// the grants.
func probeLockListing(ctx context.Context, db *sql.DB) (dialects.Capability, *dialects.MissingPrivilege) {
	var n int64
	err := db.QueryRowContext(ctx, lockListingSQL).Scan(&n)
	if err == nil {
		return dialects.CapYes(fmt.Sprintf("proved: GV$LOCK joined with SYS.DBMS_LOCK_ALLOCATED and GV$SESSION is readable (%d DBMS_LOCK locks now)", n)), nil
	}
	priv, ok := viewError(ctx, db, err).(*dialects.PrivilegeError)
	if !ok {
		return dialects.CapUnknown("reading GV$LOCK failed: "+oralike.OneLine(err), ""), nil
	}
	return dialects.CapNo("GV$LOCK, GV$SESSION and SYS.DBMS_LOCK_ALLOCATED cannot be read: "+oralike.OneLine(err), priv.Grant),
		&dialects.MissingPrivilege{
			Privilege: priv.Privilege,
			NeededFor: "locks ls: listing session locks and naming their holders",
			Grant:     priv.Grant,
		}
}

// killCapability says whether the session may end other sessions with
// ALTER SYSTEM KILL SESSION.
func killCapability(p oralike.Privileges) (dialects.Capability, *dialects.MissingPrivilege) {
	grant := "GRANT ALTER SYSTEM TO " + oralike.QuoteUser(p.User)
	remedy := grant + " (on Amazon RDS, where it cannot be granted, end the session with rdsadmin.rdsadmin_util.kill)"
	switch {
	case p.Err != nil:
		return dialects.CapUnknown(oralike.OneLine(p.Err), remedy), nil
	case p.Kill:
		return dialects.CapYes("SESSION_PRIVS has ALTER SYSTEM: ALTER SYSTEM KILL SESSION may end other sessions; a busy session may stay \"marked for kill\", holding its locks, until its call returns"), nil
	}
	return dialects.CapNo("SESSION_PRIVS lacks ALTER SYSTEM: ALTER SYSTEM KILL SESSION fails with ORA-01031", remedy),
		&dialects.MissingPrivilege{
			Privilege: "ALTER SYSTEM",
			NeededFor: string(dialects.TermKillSession) + ": ending another session to free its DBMS_LOCK lock",
			Grant:     grant,
		}
}

// rowLockFacts says what the version promises for SKIP LOCKED (documented
// from 11.1) and NOWAIT (every version); a probe replaces them when it
// runs.
func rowLockFacts(info dialects.Info) (skip, nowait dialects.Capability) {
	switch {
	case info.Version == "":
		skip = dialects.CapUnknown("by version: the Oracle version is unknown (SKIP LOCKED is documented from 11.1)", "")
	case versionAtLeast(info.Version, 11, 1):
		skip = dialects.CapYes("by version: Oracle " + info.Version + " (SELECT … FOR UPDATE SKIP LOCKED is documented from 11.1)")
	default:
		skip = dialects.CapNo("by version: Oracle "+info.Version+" (SKIP LOCKED is documented from 11.1)",
			"upgrade to 11.1 or later, or claim rows optimistically (UPDATE … WHERE version = ?)")
	}
	nowait = dialects.CapYes("by version: Oracle has SELECT … FOR UPDATE NOWAIT (ORA-00054 on a locked row)")
	return skip, nowait
}

// rowLockProbe is the SKIP LOCKED / NOWAIT probe on table t. Every
// statement of this package runs in autocommit, so a pooled connection
// carries no transaction and SET TRANSACTION starts the holder's;
// a SELECT … FOR UPDATE is not committed by go-ora, so the row stays
// locked until the probe's ROLLBACK. The row is locked by its primary key:
// ROWNUM <= n with SKIP LOCKED filters before locking and FETCH FIRST n
// with FOR UPDATE raises ORA-02014, so neither belongs in a probe.
func rowLockProbe(t string) sqlkit.RowLockProbe {
	return sqlkit.RowLockProbe{
		Create:     "CREATE TABLE " + t + " (id NUMBER(10) PRIMARY KEY)",
		Insert:     "INSERT INTO " + t + " (id) VALUES (1)",
		Begin:      "SET TRANSACTION READ WRITE",
		Lock:       "SELECT id FROM " + t + " WHERE id = 1 FOR UPDATE",
		SkipLocked: "SELECT id FROM " + t + " WHERE id = 1 FOR UPDATE SKIP LOCKED",
		NoWait:     "SELECT id FROM " + t + " WHERE id = 1 FOR UPDATE NOWAIT",
		Drop:       "DROP TABLE " + t + " PURGE",
		NotSupported: func(err error) bool {
			switch oraCode(err) {
			case oraCommandNotEnded, oraMissingKeyword, oraInvalidStatement:
				return true
			}
			return false
		},
		Refused: func(err error) bool { return oraCode(err) == oraResourceBusy },
	}
}
