package sqlserver

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// Server error numbers the row-lock probe reads.
const (
	errSyntax            = 102 // "Incorrect syntax near '%.*ls'."
	errInvalidHint       = 321 // "%.*ls is not a recognized table hints option."
	errReadPastIsolation = 650 // "You can only specify the READPAST lock in the READ COMMITTED or REPEATABLE READ isolation levels."
)

// rightsSQL reads the caller's names and the permissions schedlock needs:
// to end other sessions (ALTER ANY CONNECTION on SQL Server and Managed
// Instance; KILL DATABASE CONNECTION on Azure SQL Database), and to create
// the lock table (CREATE TABLE in the database and ALTER on the default
// schema). HAS_PERMS_BY_NAME answers 1, 0, or NULL when it cannot tell.
const (
	rightsSQL = `SELECT SUSER_SNAME(), USER_NAME(), SCHEMA_NAME(),
  HAS_PERMS_BY_NAME(NULL, NULL, 'ALTER ANY CONNECTION'),
  HAS_PERMS_BY_NAME(DB_NAME(), 'DATABASE', 'CREATE TABLE'),
  HAS_PERMS_BY_NAME(SCHEMA_NAME(), 'SCHEMA', 'ALTER')`
	rightsAzureSQL = `SELECT SUSER_SNAME(), USER_NAME(), SCHEMA_NAME(),
  HAS_PERMS_BY_NAME(DB_NAME(), 'DATABASE', 'KILL DATABASE CONNECTION'),
  HAS_PERMS_BY_NAME(DB_NAME(), 'DATABASE', 'CREATE TABLE'),
  HAS_PERMS_BY_NAME(SCHEMA_NAME(), 'SCHEMA', 'ALTER')`
)

// isolationSQL is the isolation level of this session (1 read
// uncommitted, 2 read committed, 3 repeatable read, 4 serializable,
// 5 snapshot); a session always sees its own row of sys.dm_exec_sessions.
const isolationSQL = `SELECT transaction_isolation_level FROM sys.dm_exec_sessions WHERE session_id = @@SPID`

// nowSQLText is SYSUTCDATETIME() as text (style 121, seven fractional
// digits), so the clock reading does not depend on how the driver maps
// datetime2.
const nowSQLText = `SELECT CONVERT(varchar(27), SYSUTCDATETIME(), 121)`

// rights is what the caller may do, as far as it could be read.
type rights struct {
	login, user, schema string // quoted for a GRANT
	kill                sql.NullInt64
	createTable         sql.NullInt64
	alterSchema         sql.NullInt64
	err                 error
}

func readRights(ctx context.Context, db *sql.DB, info dialects.Info) rights {
	query := rightsSQL
	if azureDatabase(info) {
		query = rightsAzureSQL
	}
	var r rights
	var login, user, schema sql.NullString
	if err := db.QueryRowContext(ctx, query).Scan(&login, &user, &schema, &r.kill, &r.createTable, &r.alterSchema); err != nil {
		r.err = fmt.Errorf("read the caller's permissions: %w", err)
		r.login, r.user, r.schema = "[<login>]", "[<user>]", "[dbo]"
		return r
	}
	r.login, r.user, r.schema = quoteName(login.String), quoteName(user.String), quoteName(schema.String)
	if schema.String == "" {
		r.schema = "[dbo]"
	}
	return r
}

// ProbeDialect implements sqlkit.ProbeEngine for SQL Server and Azure SQL.
// It reads the session's isolation level (and the database's
// READ_COMMITTED_SNAPSHOT flag from detection, b.RCSI), whether
// sys.dm_tran_locks can be read, the permissions to KILL and to create the
// lock table, and SYSUTCDATETIME() for the clock skew. Unless opts.ReadOnly, it proves the
// READPAST claim query (reported as SkipLocked) and the NOWAIT table hint
// on a probe table it creates in the default schema and drops. It changes
// no setting and leaves nothing behind. The session locks are proven by
// sqlkit.ProbeSessionOps; on Azure Synapse, which has none, they are
// reported as missing.
func (b *Backend) ProbeDialect(ctx context.Context, opts dialects.ProbeOptions) (dialects.Capabilities, error) {
	db, info := b.SQL, b.Info
	var caps dialects.Capabilities
	if isSynapse(info) {
		caps.SessionLocks = dialects.CapNo(synapseRefusal, "")
	}
	r := readRights(ctx, db, info)
	if ctx.Err() != nil {
		return caps, ctx.Err()
	}
	caps.Isolation = probeIsolation(ctx, db, b.RCSI)
	caps.LockListing = probeLockListing(ctx, db, info)
	if !caps.LockListing.Supported && caps.LockListing.Status == dialects.StatusNo {
		caps.MissingPrivileges = append(caps.MissingPrivileges, viewStateGrant(ctx, db, info))
	}
	var missingKill *dialects.MissingPrivilege
	caps.KillSessions, missingKill = killCapability(info, r)
	if missingKill != nil {
		caps.MissingPrivileges = append(caps.MissingPrivileges, *missingKill)
	}
	canCreate := true
	if p := createPrivilege(r); p != nil {
		canCreate = false
		caps.MissingPrivileges = append(caps.MissingPrivileges, *p)
	}
	caps.SkipLocked, caps.NoWait = rowLockFacts(info, b.RCSI)
	if !isSynapse(info) {
		if err := sqlkit.ProveRowLocks(ctx, db, &caps, opts.ReadOnly, canCreate, rowLockProbe(sqlkit.ProbeTableName(), b.RCSI), nil); err != nil {
			return caps, err
		}
	}
	if caps.SkipLocked.Supported {
		caps.Recommended.ClaimStrategy = dialects.ClaimReadPast
		caps.Recommended.ClaimReason = "SELECT TOP (n) … WITH (UPDLOCK, READPAST, ROWLOCK) inside a transaction lets each worker take rows no other worker holds, without waiting"
		if b.RCSI {
			caps.Recommended.ClaimReason += "; READ_COMMITTED_SNAPSHOT is ON here, so add READCOMMITTEDLOCK to the hints"
		}
	}
	caps.Clock = sqlkit.MeasureClock(ctx, db, ServerNow)
	return caps, ctx.Err()
}

// ServerNow reads SYSUTCDATETIME(), the server's UTC clock as the
// statement runs.
func ServerNow(ctx context.Context, conn *sql.Conn) (time.Time, error) {
	var text string
	if err := conn.QueryRowContext(ctx, nowSQLText).Scan(&text); err != nil {
		return time.Time{}, fmt.Errorf("SYSUTCDATETIME(): %w", err)
	}
	return sqlkit.ParseServerTime(text)
}

// probeIsolation reads the session's isolation level; read committed is
// marked as row versioning when the database has RCSI on (rcsi).
func probeIsolation(ctx context.Context, db *sql.DB, rcsi bool) dialects.Capability {
	var level sql.NullInt64
	if err := db.QueryRowContext(ctx, isolationSQL).Scan(&level); err != nil {
		return dialects.CapUnknown("reading the isolation level failed: "+oneLine(err), "")
	}
	name, ok := isolationLevels[level.Int64]
	if !ok {
		return dialects.CapUnknown(fmt.Sprintf("unknown isolation level %d", level.Int64), "")
	}
	if level.Int64 == 2 && rcsi {
		name += " (row versioning: READ_COMMITTED_SNAPSHOT is ON)"
	}
	return dialects.CapYes(name)
}

var isolationLevels = map[int64]string{
	0: "unspecified", 1: "read uncommitted", 2: "read committed", 3: "repeatable read", 4: "serializable", 5: "snapshot",
}

// probeLockListing proves that the application locks and their sessions
// can be read.
func probeLockListing(ctx context.Context, db *sql.DB, info dialects.Info) dialects.Capability {
	if isSynapse(info) {
		return dialects.CapNo("Azure Synapse has no application locks to list", "")
	}
	locks, err := ListSessionLocks(ctx, db)
	switch {
	case err == nil:
		return dialects.CapYes(fmt.Sprintf("proved: sys.dm_tran_locks joined with sys.dm_exec_sessions is readable (%d application locks now)", len(locks)))
	case hasNumber(err, errViewStateDenied, errPermissionDenied):
		grant := viewStateGrant(ctx, db, info)
		return dialects.CapNo("sys.dm_tran_locks needs "+grant.Privilege+": "+oneLine(err), grant.Grant)
	}
	return dialects.CapUnknown("reading sys.dm_tran_locks failed: "+oneLine(err), "")
}

// killCapability says whether the caller may end other sessions with KILL.
func killCapability(info dialects.Info, r rights) (dialects.Capability, *dialects.MissingPrivilege) {
	privilege, grant := "ALTER ANY CONNECTION", "USE master; GRANT ALTER ANY CONNECTION TO "+r.login
	if azureDatabase(info) {
		privilege, grant = "KILL DATABASE CONNECTION", "GRANT KILL DATABASE CONNECTION TO "+r.user
	}
	switch {
	case r.err != nil:
		return dialects.CapUnknown(r.err.Error(), grant), nil
	case !r.kill.Valid:
		return dialects.CapUnknown("HAS_PERMS_BY_NAME could not tell whether the caller has "+privilege, grant), nil
	case r.kill.Int64 == 1:
		return dialects.CapYes("the caller has " + privilege + ": KILL may end other sessions"), nil
	}
	return dialects.CapNo("the caller lacks "+privilege+": KILL of another session fails with error 6102", grant),
		&dialects.MissingPrivilege{
			Privilege: privilege,
			NeededFor: string(dialects.TermKillSession) + ": ending another session to free its application lock",
			Grant:     grant,
		}
}

// createPrivilege is the missing permission that keeps the table strategy
// from creating its table, or nil.
func createPrivilege(r rights) *dialects.MissingPrivilege {
	const neededFor = "the table strategy creating its lock table (or have it created in advance by a user that may)"
	switch {
	case r.err != nil:
		return nil
	case r.createTable.Valid && r.createTable.Int64 == 0:
		return &dialects.MissingPrivilege{Privilege: "CREATE TABLE", NeededFor: neededFor,
			Grant: "GRANT CREATE TABLE TO " + r.user + "; GRANT ALTER ON SCHEMA::" + r.schema + " TO " + r.user}
	case r.alterSchema.Valid && r.alterSchema.Int64 == 0:
		return &dialects.MissingPrivilege{Privilege: "ALTER on schema " + r.schema, NeededFor: neededFor,
			Grant: "GRANT ALTER ON SCHEMA::" + r.schema + " TO " + r.user}
	}
	return nil
}

// rowLockFacts says what the product promises for READPAST and NOWAIT
// (rcsi: the database runs READ_COMMITTED_SNAPSHOT); a probe replaces them
// when it runs.
func rowLockFacts(info dialects.Info, rcsi bool) (readPast, nowait dialects.Capability) {
	if isSynapse(info) {
		no := dialects.CapNo("by version: Azure Synapse has no row-lock hints", "")
		return no, no
	}
	readPast = dialects.CapYes("by version: SQL Server has READPAST (WITH (UPDLOCK, READPAST, ROWLOCK))")
	if rcsi {
		readPast.Detail += "; READ_COMMITTED_SNAPSHOT is ON, so the query needs READCOMMITTEDLOCK"
	}
	nowait = dialects.CapYes("by version: SQL Server has the NOWAIT table hint (error 1222 on a locked row)")
	return readPast, nowait
}

// rowLockProbe is the READPAST / NOWAIT probe on table t. Under
// READ_COMMITTED_SNAPSHOT (rcsi) the READPAST query carries
// READCOMMITTEDLOCK, as the claim query must.
func rowLockProbe(t string, rcsi bool) sqlkit.RowLockProbe {
	hints := "UPDLOCK, READPAST, ROWLOCK"
	if rcsi {
		hints += ", READCOMMITTEDLOCK"
	}
	return sqlkit.RowLockProbe{
		Create:     "CREATE TABLE " + t + " (id int PRIMARY KEY)",
		Insert:     "INSERT INTO " + t + " (id) VALUES (1)",
		Begin:      "BEGIN TRANSACTION",
		Lock:       "SELECT id FROM " + t + " WITH (UPDLOCK, ROWLOCK) WHERE id = 1",
		SkipLocked: "SELECT id FROM " + t + " WITH (" + hints + ") WHERE id = 1",
		NoWait:     "SELECT id FROM " + t + " WITH (UPDLOCK, ROWLOCK, NOWAIT) WHERE id = 1",
		Drop:       "IF OBJECT_ID(N'" + t + "', N'U') IS NOT NULL DROP TABLE " + t,
		NotSupported: func(err error) bool {
			return hasNumber(err, errSyntax, errInvalidHint, errReadPastIsolation)
		},
		Refused: func(err error) bool { return hasNumber(err, errLockTimeout) },
	}
}
