package dameng

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/oralike"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// Dameng error codes the row-lock probe reads.
const (
	// codeSyntax: "语法分析出错", what the parser says of a clause it does
	// not know.
	codeSyntax = -2007
	// codeLockRefused: a row lock that cannot be had at once, what
	// FOR UPDATE NOWAIT raises on a locked row [U: taken from GeneXus's
	// Dameng support, which reads -6409 as "object locked"].
	codeLockRefused = -6409
)

// Probe statements.
var (
	// privilegesSQL reads the session user, whether it has the DBA role
	// (USER_ROLE_PRIVS), which SP_CLOSE_SESSION on another user's session
	// needs, and whether its system privileges (SESSION_PRIVS) include
	// CREATE TABLE or CREATE ANY TABLE [U: both views are DM's
	// Oracle-compatible dictionary; USER_ROLE_PRIVS lists directly granted
	// roles only].
	privilegesSQL = "SELECT USER," +
		" (SELECT COUNT(*) FROM USER_ROLE_PRIVS WHERE GRANTED_ROLE = 'DBA')," +
		" (SELECT COUNT(*) FROM SESSION_PRIVS WHERE PRIVILEGE IN ('CREATE TABLE', 'CREATE ANY TABLE'))" +
		" FROM DUAL"
	// lockListingSQL is the listing's join, counted: it proves the user
	// may read every view ListSessionLocks reads.
	lockListingSQL = "SELECT COUNT(*)" + sessionLockFrom
	// lockViewsSQL reads the two views of the listing that exist without
	// DBMS_LOCK, for a server where it is not installed.
	lockViewsSQL = "SELECT COUNT(*) FROM V$LOCK l JOIN V$SESSIONS s ON s.TRX_ID = l.TRX_ID"
	// serverNowSQL is the lease tables' clock, CAST(SYS_EXTRACT_UTC(
	// SYSTIMESTAMP) AS TIMESTAMP(3)), as milliseconds since the epoch: the
	// very expression the listing reads, so the skew measured is the one
	// leases see.
	serverNowSQL = "SELECT " + epochMs(sqlNow) + " FROM DUAL"
)

// Probe implements dialects.ProbeFunc for DM8. It re-runs New's DBMS_LOCK
// catalog query and recommends from that fresher answer: when the package
// is not installed session locks are "no" with the call that installs it;
// when it is, dialects.DB.Probe proves them on two connections. It counts
// the rows of the listing's join of V$LOCK, SYS.DBMS_LOCK_ALLOCATED and
// V$SESSIONS (only V$LOCK and V$SESSIONS without DBMS_LOCK, which leaves
// nothing to list), reads USER_ROLE_PRIVS for the DBA role
// (SP_CLOSE_SESSION) and SESSION_PRIVS for CREATE TABLE, and reads the
// lease tables' clock for the skew. Unless opts.ReadOnly or CREATE TABLE is
// missing, it proves SKIP LOCKED and NOWAIT on a probe table it creates in
// the current schema and drops (see rowLockProbe); otherwise both are
// "unknown", DM8's syntax being documented but unverified. The isolation
// level is DM's default, read committed [U: not read from the server]. It
// changes no setting and leaves nothing behind.
func Probe(ctx context.Context, db *sql.DB, info dialects.Info, opts dialects.ProbeOptions) (dialects.Capabilities, error) {
	var caps dialects.Capabilities
	p := oralike.ReadPrivileges(ctx, db, privilegesSQL, "USER_ROLE_PRIVS and SESSION_PRIVS")
	p.Err = trimmed(p.Err)
	access, err := probeDBMSLock(ctx, db)
	if err != nil {
		return caps, err
	}
	caps.SessionLocks = sessionLockCapability(access, p.User)
	if access.Known {
		// The answer may be fresher than detection's (a DBA installed
		// DBMS_LOCK since): prove the locks and recommend from it.
		if access.Usable {
			caps.SessionLocks = sqlkit.ProbeSessionOps(ctx, db, &SessionOps{})
		}
		caps.Recommended.LockStrategy, caps.Recommended.LockReason = recommend(access)
	}
	caps.Isolation = dialects.CapYes("read committed")
	add := func(m *dialects.MissingPrivilege) {
		if m != nil {
			caps.MissingPrivileges = append(caps.MissingPrivileges, *m)
		}
	}
	var missing *dialects.MissingPrivilege
	caps.LockListing, missing = probeLockListing(ctx, db, access, p.User)
	add(missing)
	caps.KillSessions, missing = killCapability(p)
	add(missing)
	cannotCreate := p.MissingCreateTable("")
	add(cannotCreate)
	if ctx.Err() != nil {
		return caps, ctx.Err()
	}

	caps.SkipLocked, caps.NoWait = rowLockFacts(info)
	if err := sqlkit.ProveRowLocks(ctx, db, &caps, opts.ReadOnly, cannotCreate == nil, rowLockProbe(sqlkit.ProbeTableName()), oralike.OneLine); err != nil {
		return caps, err
	}
	caps.SkipLocked, caps.NoWait = withoutStack(caps.SkipLocked), withoutStack(caps.NoWait)
	if caps.SkipLocked.Supported {
		caps.Recommended.ClaimStrategy = dialects.ClaimSkipLocked
		caps.Recommended.ClaimReason = "SELECT … FOR UPDATE SKIP LOCKED lets each worker take rows no other worker holds, without waiting; " +
			"lock rows by key or fetch n rows from an open cursor: whether DM applies ROWNUM, TOP or LIMIT before or after skipping locked rows is unverified"
	}
	caps.Clock = sqlkit.MeasureClock(ctx, db, ServerNow)
	return caps, ctx.Err()
}

// ServerNow reads the lease tables' clock, CAST(SYS_EXTRACT_UTC(
// SYSTIMESTAMP) AS TIMESTAMP(3)): the database host's clock in UTC as the
// statement runs, to the millisecond.
func ServerNow(ctx context.Context, conn *sql.Conn) (time.Time, error) {
	var ms int64
	if err := conn.QueryRowContext(ctx, serverNowSQL).Scan(&ms); err != nil {
		return time.Time{}, fmt.Errorf("SYS_EXTRACT_UTC(SYSTIMESTAMP): %w", trimmed(err))
	}
	return time.UnixMilli(ms).UTC(), nil
}

// sessionLockCapability is the session-lock answer the catalog gives: "no"
// without DBMS_LOCK, "unknown" when the catalog could not be read, and
// none (zero, for DB.Probe to prove) when the package is installed.
func sessionLockCapability(access lockAccess, user string) dialects.Capability {
	switch {
	case access.Usable:
		return dialects.Capability{}
	case access.Known:
		return dialects.CapNo("the DBMS_LOCK system package is not installed (or this user cannot see SYS.DBMS_LOCK in ALL_OBJECTS); a DBA installs it with "+installDBMSLock,
			installDBMSLock+" (a DBA, once), then "+grantFor(grantDBMSLock, user)+" where EXECUTE is not granted to PUBLIC; or "+dialects.UseTableStrategy.String())
	}
	return dialects.CapUnknown("whether the DBMS_LOCK system package is installed could not be checked: "+oralike.OneLine(access.Err),
		"").Fixed(dialects.UseTableStrategy, ", or let this user read ALL_OBJECTS")
}

// probeLockListing proves that the listing's views can be read, or says
// what is missing: DBMS_LOCK itself, or SELECT on the views. A refusal is
// a missing privilege only where DBMS_LOCK is known to be installed, so
// that SYS.DBMS_LOCK_ALLOCATED exists.
func probeLockListing(ctx context.Context, db *sql.DB, access lockAccess, user string) (dialects.Capability, *dialects.MissingPrivilege) {
	var n int64
	if access.Known && !access.Usable {
		err := db.QueryRowContext(ctx, lockViewsSQL).Scan(&n)
		switch {
		case err == nil:
			return dialects.CapNo("V$LOCK and V$SESSIONS are readable, but there are no session locks to list: the DBMS_LOCK system package is not installed",
				installDBMSLock), nil
		case viewsUnavailable(err):
			priv := viewsPrivilege(user, "V$LOCK", "V$SESSIONS")
			return dialects.CapNo("the DBMS_LOCK system package is not installed, and V$LOCK and V$SESSIONS cannot be read: "+oralike.OneLine(err),
				installDBMSLock+"; "+priv.Grant), &priv
		}
		return dialects.CapUnknown("reading V$LOCK and V$SESSIONS failed: "+oralike.OneLine(err), ""), nil
	}
	err := db.QueryRowContext(ctx, lockListingSQL).Scan(&n)
	priv := viewsPrivilege(user, "V$LOCK", "V$SESSIONS", "SYS.DBMS_LOCK_ALLOCATED")
	switch {
	case err == nil:
		return dialects.CapYes(fmt.Sprintf("proved: V$LOCK joined with SYS.DBMS_LOCK_ALLOCATED and V$SESSIONS is readable (%d DBMS_LOCK locks now)", n)), nil
	case !viewsUnavailable(err):
		return dialects.CapUnknown("reading V$LOCK, V$SESSIONS and SYS.DBMS_LOCK_ALLOCATED failed: "+oralike.OneLine(err), ""), nil
	case !access.Known:
		return dialects.CapUnknown("V$LOCK, V$SESSIONS or SYS.DBMS_LOCK_ALLOCATED cannot be read ("+oralike.OneLine(err)+"), and whether DBMS_LOCK is installed could not be checked",
			priv.Grant), nil
	}
	return dialects.CapNo("V$LOCK, V$SESSIONS and SYS.DBMS_LOCK_ALLOCATED cannot be read: "+oralike.OneLine(err), priv.Grant), &priv
}

// viewsUnavailable reports a view that does not exist or may not be read
// (the same errors the listing turns into ListingUnavailableError).
func viewsUnavailable(err error) bool { return IsMissingTable(err) || mentionsPrivilege(err) }

// viewsPrivilege is the missing SELECT on views, for the listing.
func viewsPrivilege(user string, views ...string) dialects.MissingPrivilege {
	grants := make([]string, len(views))
	for i, v := range views {
		grants[i] = "GRANT SELECT ON " + v + " TO " + oralike.QuoteUser(user)
	}
	return dialects.MissingPrivilege{
		Privilege: "SELECT ON " + strings.Join(views, ", "),
		NeededFor: "locks ls: listing session locks and naming their holders",
		Grant:     strings.Join(grants, "; "),
	}
}

// killCapability says whether the session may end other sessions with
// SP_CLOSE_SESSION, which needs the DBA role [U].
func killCapability(p oralike.Privileges) (dialects.Capability, *dialects.MissingPrivilege) {
	grant := "GRANT DBA TO " + oralike.QuoteUser(p.User)
	switch {
	case p.Err != nil:
		return dialects.CapUnknown(oralike.OneLine(p.Err), grant), nil
	case p.Kill:
		return dialects.CapYes("USER_ROLE_PRIVS has the DBA role: CALL SP_CLOSE_SESSION may end another session, and its DBMS_LOCK locks with it"), nil
	}
	return dialects.CapNo("USER_ROLE_PRIVS lacks the DBA role, which SP_CLOSE_SESSION needs to end another user's session", grant),
		&dialects.MissingPrivilege{
			Privilege: "DBA",
			NeededFor: string(dialects.TermKillSession) + ": ending another session (SP_CLOSE_SESSION) to free its DBMS_LOCK lock",
			Grant:     grant,
		}
}

// rowLockFacts is what is known of SKIP LOCKED and NOWAIT without a probe:
// DM8's FOR UPDATE clause is documented with NOWAIT, WAIT n and SKIP
// LOCKED, but that is unverified, so both stay "unknown" until the probe
// runs.
func rowLockFacts(info dialects.Info) (skip, nowait dialects.Capability) {
	version := "DM " + info.Version
	if info.Version == "" {
		version = "the DM version is unknown"
	}
	skip = dialects.CapUnknown("by version: "+version+"; SELECT … FOR UPDATE SKIP LOCKED is assumed from DM8's documented syntax, not proved", "")
	nowait = dialects.CapUnknown("by version: "+version+"; SELECT … FOR UPDATE NOWAIT is assumed from DM8's documented syntax, not proved", "")
	return skip, nowait
}

// rowLockProbe is the SKIP LOCKED / NOWAIT probe on table t, run by
// sqlkit.RowLockProbe.BeginTx: the driver's autocommit is a connection
// attribute that only a database/sql transaction turns off (DM has no
// statement that begins a transaction), so the holder's SELECT … FOR UPDATE
// runs in one; the second connection's statements run in autocommit. The
// row is locked by its primary key.
func rowLockProbe(t string) sqlkit.RowLockProbe {
	return sqlkit.RowLockProbe{
		Create:       "CREATE TABLE " + t + " (id INT PRIMARY KEY)",
		Insert:       "INSERT INTO " + t + " (id) VALUES (1)",
		Lock:         "SELECT id FROM " + t + " WHERE id = 1 FOR UPDATE",
		SkipLocked:   "SELECT id FROM " + t + " WHERE id = 1 FOR UPDATE SKIP LOCKED",
		NoWait:       "SELECT id FROM " + t + " WHERE id = 1 FOR UPDATE NOWAIT",
		Drop:         "DROP TABLE " + t,
		NotSupported: IsSyntaxError,
		Refused:      IsLockRefused,
		BeginTx:      true,
	}
}

// IsSyntaxError reports the parser's refusal: code -2007, or its message
// ("语法分析出错", "syntax error").
func IsSyntaxError(err error) bool {
	if err == nil {
		return false
	}
	if hasCode(err, codeSyntax) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "语法分析出错") || strings.Contains(strings.ToLower(msg), "syntax error")
}

// IsLockRefused reports a row lock refused without waiting, what
// FOR UPDATE NOWAIT raises on a row another session holds: code -6409, or
// a message speaking of a lock timeout ("锁超时") [U: the code and text
// are unverified on a live server].
func IsLockRefused(err error) bool {
	if err == nil {
		return false
	}
	if hasCode(err, codeLockRefused) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "锁超时") || strings.Contains(strings.ToLower(msg), "lock timeout")
}

// withoutStack drops the stack trace the driver appends to its error text
// from a detail that quotes a driver error on one line ("… refused in 2ms
// (Error -6409: 锁超时 stack info: 1). …)"), closing the parenthesis the
// quote was in.
func withoutStack(c dialects.Capability) dialects.Capability {
	before, _, found := strings.Cut(c.Detail, " stack info:")
	if !found {
		return c
	}
	if strings.Count(before, "(") > strings.Count(before, ")") {
		before += ")"
	}
	c.Detail = before
	return c
}

// grantFor fills the "<user>" of a GRANT template.
func grantFor(template, user string) string {
	return strings.ReplaceAll(template, "<user>", oralike.QuoteUser(user))
}
