package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// SQLSTATE codes the row-lock probe reads.
const (
	codeSyntaxError        = "42601"
	codeFeatureUnsupported = "0A000"
	codeLockNotAvailable   = "55P03"
)

// listsTheTable follows the table strategy's remedy where session locks
// cannot be listed.
const listsTheTable = ": " + string(dialects.TermListLocks) + " lists the lease table"

// probe is Backend.ProbeDialect on the database of info on db, whose
// views and functions catalog c names. It reads the default isolation
// level (SHOW transaction_isolation), whether pg_locks and
// pg_stat_activity are readable, the current role's superuser flag and
// pg_signal_backend / pg_read_all_stats membership, the CREATE privilege
// on current_schema(), and clock_timestamp() for the clock skew. Unless opts.ReadOnly, it proves SKIP LOCKED and NOWAIT on a
// probe table it creates in current_schema() and drops. On CockroachDB and
// YugabyteDB before 2025.1, whose session locker refuses, it still runs the
// two-connection probe on the advisory lock functions, so a stub is shown
// as one. It reads nothing else and leaves nothing behind.
func probe(ctx context.Context, db *sql.DB, info dialects.Info, c Catalog, opts dialects.ProbeOptions) (dialects.Capabilities, error) {
	var caps dialects.Capabilities
	if refusal := SessionRefusal(info); refusal != nil {
		caps.SessionLocks = probeRefusedSession(ctx, db, refusal)
	}
	rights := readRoleRights(ctx, db)
	if ctx.Err() != nil {
		return caps, ctx.Err()
	}
	caps.Isolation = probeIsolation(ctx, db)
	caps.LockListing = probeLockListing(ctx, db, info, c, rights)
	caps.KillSessions = killCapability(info, rights)
	canCreate := true
	if p := createPrivilege(rights); p != nil {
		canCreate = false
		caps.MissingPrivileges = append(caps.MissingPrivileges, *p)
	}
	if rights.err == nil && info.Product != dialects.ProductCockroachDB && !caps.KillSessions.Supported {
		caps.MissingPrivileges = append(caps.MissingPrivileges, dialects.MissingPrivilege{
			Privilege: "pg_signal_backend",
			NeededFor: string(dialects.TermKillSession) + ": terminating another user's session to free its advisory lock",
			Grant:     "GRANT pg_signal_backend TO " + rights.quotedUser(),
		})
	}
	caps.SkipLocked, caps.NoWait = rowLockFacts(info)
	if err := sqlkit.ProveRowLocks(ctx, db, &caps, opts.ReadOnly, canCreate, rowLockProbe(sqlkit.ProbeTableName()), nil); err != nil {
		return caps, err
	}
	caps.Clock = sqlkit.MeasureClock(ctx, db, ServerNow)
	caps.Recommended.ClaimStrategy, caps.Recommended.ClaimReason = claimFor(info)
	return caps, ctx.Err()
}

// ServerNow reads clock_timestamp(), the server's time as the statement
// runs (now() would be the start of the transaction).
func ServerNow(ctx context.Context, conn *sql.Conn) (time.Time, error) {
	var t time.Time
	if err := conn.QueryRowContext(ctx, "SELECT clock_timestamp()").Scan(&t); err != nil {
		return time.Time{}, fmt.Errorf("clock_timestamp(): %w", err)
	}
	return t, nil
}

// probeRefusedSession proves the advisory lock functions of a product
// whose session locker refuses, and keeps the answer "no" even when a
// single probe passed: the refusal rests on known defects.
func probeRefusedSession(ctx context.Context, db *sql.DB, refusal error) dialects.Capability {
	c := sqlkit.ProbeSessionOps(ctx, db, SessionOps{})
	switch c.Status {
	case dialects.StatusStub:
		return c
	case dialects.StatusYes:
		return dialects.CapNo(refusalText(refusal)+" (one probe passed, which does not make it reliable)", "").Fixed(dialects.UseTableStrategy, "")
	}
	return dialects.CapNo(refusalText(refusal)+" ("+c.Detail+")", "").Fixed(dialects.UseTableStrategy, "")
}

// refusalText is a SessionRefusal error without its sentinel prefix nor
// its remedy (the capability carries that apart).
func refusalText(err error) string {
	var withFix *dialects.RemedyError
	if errors.As(err, &withFix) {
		err = withFix.Err
	}
	msg := err.Error()
	prefix := dialects.ErrUnsupported.Error() + ": "
	if len(msg) > len(prefix) && msg[:len(prefix)] == prefix {
		return msg[len(prefix):]
	}
	return msg
}

// roleRights is what the current role may do, as far as it could be read.
type roleRights struct {
	user         string
	superuser    bool
	signal       bool   // member of pg_signal_backend
	signalErr    error  // pg_signal_backend could not be checked (PostgreSQL < 9.6, CockroachDB)
	readAllStats bool   // member of pg_read_all_stats
	schema       string // current_schema(); empty when search_path names no existing schema
	schemaCreate bool
	err          error // the role could not be read at all
}

// quotedUser is the role as an SQL identifier, for GRANT texts.
func (r roleRights) quotedUser() string {
	if r.user == "" {
		return "<user>"
	}
	return pgx.Identifier{r.user}.Sanitize()
}

// readRoleRights reads the current role's rights; r.err says when they
// could not be read. Membership checks that fail (roles missing on old
// servers or other products) count as not a member.
func readRoleRights(ctx context.Context, db *sql.DB) roleRights {
	var r roleRights
	var schema sql.NullString
	var create sql.NullBool
	err := db.QueryRowContext(ctx, `SELECT current_user, COALESCE((SELECT rolsuper FROM pg_roles WHERE rolname = current_user), false),
current_schema(), has_schema_privilege(current_schema(), 'CREATE')`).Scan(&r.user, &r.superuser, &schema, &create)
	if err != nil {
		r.err = fmt.Errorf("read the current role: %w", err)
		return r
	}
	r.schema, r.schemaCreate = schema.String, create.Valid && create.Bool
	r.signal, r.signalErr = memberOf(ctx, db, "pg_signal_backend")
	r.readAllStats, _ = memberOf(ctx, db, "pg_read_all_stats")
	return r
}

// memberOf reports whether the current role is a member of role.
func memberOf(ctx context.Context, db *sql.DB, role string) (bool, error) {
	var member bool
	err := db.QueryRowContext(ctx, "SELECT pg_has_role(current_user, $1, 'MEMBER')", role).Scan(&member)
	return member, err
}

// createPrivilege is the missing privilege that keeps the table strategy
// from creating its table, or nil.
func createPrivilege(r roleRights) *dialects.MissingPrivilege {
	const neededFor = "the table strategy creating its lock table (or have it created in advance by a user that may)"
	switch {
	case r.err != nil:
		return nil
	case r.schema == "":
		return &dialects.MissingPrivilege{
			Privilege: "a schema in search_path",
			NeededFor: neededFor + "; search_path names no existing schema",
			Grant:     "CREATE SCHEMA " + r.quotedUser() + " AUTHORIZATION " + r.quotedUser(),
		}
	case !r.schemaCreate:
		schema := pgx.Identifier{r.schema}.Sanitize()
		return &dialects.MissingPrivilege{
			Privilege: "CREATE on schema " + schema,
			NeededFor: neededFor,
			Grant:     "GRANT CREATE ON SCHEMA " + schema + " TO " + r.quotedUser(),
		}
	}
	return nil
}

// probeIsolation reads the session's default isolation level.
func probeIsolation(ctx context.Context, db *sql.DB) dialects.Capability {
	var level string
	if err := db.QueryRowContext(ctx, "SHOW transaction_isolation").Scan(&level); err != nil {
		return dialects.CapUnknown("SHOW transaction_isolation failed: "+err.Error(), "")
	}
	return dialects.CapYes(level)
}

// lockListSQL is the shape of the listing locks ls runs: advisory locks
// joined with their sessions, in catalog c's names (sys_locks and
// sys_stat_activity on a KingbaseES without the pg_ names).
func lockListSQL(c Catalog) string {
	return "SELECT count(*) FROM " + c.Locks + " l JOIN " + c.Activity + " a ON a.pid = l.pid WHERE l.locktype = 'advisory'"
}

// probeLockListing proves that pg_locks and pg_stat_activity (or the
// views c names) can be read.
func probeLockListing(ctx context.Context, db *sql.DB, info dialects.Info, c Catalog, r roleRights) dialects.Capability {
	if info.Product == dialects.ProductCockroachDB {
		return dialects.CapNo("CockroachDB has no real advisory locks to list", "").Fixed(dialects.UseTableStrategy, listsTheTable)
	}
	if c.Locks == "" || c.Activity == "" {
		return dialects.CapNo("the server has neither pg_locks and pg_stat_activity nor sys_locks and sys_stat_activity", "").Fixed(dialects.UseTableStrategy, listsTheTable)
	}
	var n int64
	if err := db.QueryRowContext(ctx, lockListSQL(c)).Scan(&n); err != nil {
		return dialects.CapNo(c.Locks+" joined with "+c.Activity+" cannot be read: "+err.Error(),
			"GRANT SELECT ON "+c.Locks+", "+c.Activity+" TO "+r.quotedUser())
	}
	capability := dialects.CapYes(fmt.Sprintf("proved: %s joined with %s is readable (%d advisory locks now)", c.Locks, c.Activity, n))
	if r.err == nil && !r.superuser && !r.readAllStats {
		capability.Remedy = "other users' sessions show no client address or query; to see them: GRANT pg_read_all_stats TO " + r.quotedUser()
	}
	return capability
}

// killCapability says whether the current role may terminate other roles'
// sessions with pg_terminate_backend.
func killCapability(info dialects.Info, r roleRights) dialects.Capability {
	switch {
	case info.Product == dialects.ProductCockroachDB:
		return dialects.CapUnknown("CockroachDB ends sessions with CANCEL SESSION, which needs the admin role or VIEWACTIVITY with CANCELQUERY; not probed",
			"GRANT admin TO <user>, or ALTER USER <user> WITH VIEWACTIVITY CANCELQUERY")
	case r.err != nil:
		return dialects.CapUnknown(r.err.Error(), "")
	case r.superuser:
		return dialects.CapYes(fmt.Sprintf("%s is a superuser: pg_terminate_backend may end any session", r.user))
	case r.signal:
		return dialects.CapYes(fmt.Sprintf("%s is a member of pg_signal_backend: pg_terminate_backend may end any non-superuser session", r.user))
	case r.signalErr != nil:
		return dialects.CapNo(fmt.Sprintf("%s may end only its own role's sessions; pg_signal_backend could not be checked (%v)", r.user, r.signalErr),
			"run as a superuser, or on PostgreSQL 9.6+: GRANT pg_signal_backend TO "+r.quotedUser())
	}
	return dialects.CapNo(fmt.Sprintf("%s may end only its own role's sessions (neither superuser nor member of pg_signal_backend)", r.user),
		"GRANT pg_signal_backend TO "+r.quotedUser())
}

// rowLockFacts says what the product and version promise for SKIP LOCKED
// and NOWAIT (docs/dialects.md, each product's claim strategy); a probe
// replaces them when it runs.
func rowLockFacts(info dialects.Info) (skip, nowait dialects.Capability) {
	const claimRemedy = "claim rows optimistically (UPDATE … WHERE version = ?)"
	v := info.Version
	switch info.Product {
	case dialects.ProductPostgreSQL:
		if versionAtLeast(v, 9, 5) {
			skip = dialects.CapYes("by version: PostgreSQL " + v + " (SKIP LOCKED since 9.5)")
		} else {
			skip = dialects.CapNo("by version: PostgreSQL "+v+" (SKIP LOCKED arrived in 9.5)", "upgrade to PostgreSQL 9.5+, or "+claimRemedy)
		}
		nowait = dialects.CapYes("by version: PostgreSQL " + v + " (NOWAIT since 8.1)")
	case dialects.ProductCockroachDB:
		if versionAtLeast(v, 22, 2) {
			skip = dialects.CapYes("by version: CockroachDB " + v + " (SKIP LOCKED since v22.2; its FOR UPDATE locks are best-effort)")
		} else {
			skip = dialects.CapNo("by version: CockroachDB "+v+" (SKIP LOCKED arrived in v22.2)", claimRemedy)
		}
		if versionAtLeast(v, 20, 2) {
			nowait = dialects.CapYes("by version: CockroachDB " + v + " (NOWAIT since v20.2)")
		} else {
			nowait = dialects.CapNo("by version: CockroachDB "+v+" (NOWAIT arrived in v20.2)", "")
		}
	case dialects.ProductYugabyteDB:
		skip = dialects.CapYes("by version: YugabyteDB has SKIP LOCKED, but not under SERIALIZABLE isolation")
		nowait = dialects.CapUnknown("by version: YugabyteDB honours NOWAIT only under READ COMMITTED with wait-on-conflict", "")
	case dialects.ProductOpenGauss:
		skip = dialects.CapUnknown("by version: openGauss added SKIP LOCKED around 3.1/5.0; not confirmed for "+v, "")
		nowait = dialects.CapYes("by version: openGauss has NOWAIT")
	default:
		name := info.Product
		if name == "" {
			name = "this PostgreSQL-wire database"
		}
		skip = dialects.CapUnknown("by version: not documented for "+name, "")
		nowait = dialects.CapUnknown("by version: not documented for "+name, "")
	}
	return skip, nowait
}

// rowLockProbe is the SKIP LOCKED / NOWAIT probe on table t.
func rowLockProbe(t string) sqlkit.RowLockProbe {
	return sqlkit.RowLockProbe{
		Create:     "CREATE TABLE " + t + " (id integer PRIMARY KEY)",
		Insert:     "INSERT INTO " + t + " (id) VALUES (1)",
		Lock:       "SELECT id FROM " + t + " WHERE id = 1 FOR UPDATE",
		SkipLocked: "SELECT id FROM " + t + " WHERE id = 1 FOR UPDATE SKIP LOCKED",
		NoWait:     "SELECT id FROM " + t + " WHERE id = 1 FOR UPDATE NOWAIT",
		Drop:       "DROP TABLE IF EXISTS " + t,
		NotSupported: func(err error) bool {
			return hasCode(err, codeSyntaxError) || hasCode(err, codeFeatureUnsupported)
		},
		Refused: func(err error) bool { return hasCode(err, codeLockNotAvailable) },
	}
}
