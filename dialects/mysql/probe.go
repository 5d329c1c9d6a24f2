package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// Server error numbers the probe reads.
const (
	errParse             = 1064 // ER_PARSE_ERROR
	errSyntax            = 1149 // ER_SYNTAX_ERROR
	errNotSupportedYet   = 1235 // ER_NOT_SUPPORTED_YET
	errLockWaitTimeout   = 1205 // ER_LOCK_WAIT_TIMEOUT: MariaDB's answer to NOWAIT
	errLockNoWait        = 3572 // ER_LOCK_NOWAIT: MySQL 8's answer to NOWAIT
	errTableAccessDenied = 1142 // ER_TABLEACCESS_DENIED_ERROR
)

// mdlInstrument is the performance_schema instrument that records user
// locks (GET_LOCK) in metadata_locks.
const mdlInstrument = "wait/lock/metadata/sql/mdl"

// Probe implements dialects.ProbeFunc for MySQL, MariaDB and TiDB. It reads
// the default isolation level (@@transaction_isolation, or @@tx_isolation
// on MariaDB before 11.1), whether user locks can be listed
// (performance_schema with the MDL instrument; on MariaDB also the
// metadata_lock_info plugin), the current user's global and database
// privileges from information_schema (privileges granted through roles are
// not counted), and UTC_TIMESTAMP(6) for the clock skew. Unless
// opts.ReadOnly, it proves SKIP LOCKED and NOWAIT on an InnoDB probe table
// it creates in the current database and drops. It changes no setting and
// leaves nothing behind.
func Probe(ctx context.Context, db *sql.DB, info dialects.Info, opts dialects.ProbeOptions) (dialects.Capabilities, error) {
	var caps dialects.Capabilities
	privs := readPrivileges(ctx, db)
	if ctx.Err() != nil {
		return caps, ctx.Err()
	}
	caps.Isolation = probeIsolation(ctx, db)
	caps.LockListing = probeLockListing(ctx, db, info, privs)
	var missingKill *dialects.MissingPrivilege
	caps.KillSessions, missingKill = killCapability(ctx, db, info, privs)
	if missingKill != nil {
		caps.MissingPrivileges = append(caps.MissingPrivileges, *missingKill)
	}
	canCreate := true
	if p := createPrivilege(privs); p != nil {
		canCreate = false
		caps.MissingPrivileges = append(caps.MissingPrivileges, *p)
	}
	caps.SkipLocked, caps.NoWait = rowLockFacts(info)
	if err := sqlkit.ProveRowLocks(ctx, db, &caps, opts.ReadOnly, canCreate, rowLockProbe(sqlkit.ProbeTableName(), info), nil); err != nil {
		return caps, err
	}
	caps.Clock = sqlkit.MeasureClock(ctx, db, ServerNow)
	caps.Recommended.ClaimStrategy, caps.Recommended.ClaimReason = claimFor(info)
	return caps, ctx.Err()
}

// ServerNow reads UTC_TIMESTAMP(6) as text, so the answer does not depend
// on the DSN's parseTime and loc settings.
func ServerNow(ctx context.Context, conn *sql.Conn) (time.Time, error) {
	var s string
	if err := conn.QueryRowContext(ctx, "SELECT DATE_FORMAT(UTC_TIMESTAMP(6), '%Y-%m-%d %H:%i:%s.%f')").Scan(&s); err != nil {
		return time.Time{}, fmt.Errorf("UTC_TIMESTAMP(6): %w", err)
	}
	return sqlkit.ParseServerTime(s)
}

// privileges are the current user's privileges, as far as they could be
// read.
type privileges struct {
	grantee  string          // 'user'@'host', as information_schema spells it
	database string          // DATABASE(); empty when none is selected
	global   map[string]bool // information_schema.USER_PRIVILEGES
	schema   map[string]bool // information_schema.SCHEMA_PRIVILEGES for database
	err      error
}

func (p privileges) has(privilege string) bool { return p.global[privilege] || p.schema[privilege] }

// readPrivileges reads the current user's global privileges and those on
// the current database.
func readPrivileges(ctx context.Context, db *sql.DB) privileges {
	var p privileges
	var user string
	var database sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT CURRENT_USER(), DATABASE()").Scan(&user, &database); err != nil {
		p.err = fmt.Errorf("read CURRENT_USER(): %w", err)
		return p
	}
	name, host := user, "%"
	if i := strings.LastIndexByte(user, '@'); i >= 0 {
		name, host = user[:i], user[i+1:]
	}
	p.grantee = "'" + name + "'@'" + host + "'"
	p.database = database.String
	if p.global, p.err = privilegeSet(ctx, db, "SELECT PRIVILEGE_TYPE FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = ?", p.grantee); p.err != nil {
		return p
	}
	if p.database != "" {
		p.schema, p.err = privilegeSet(ctx, db, "SELECT PRIVILEGE_TYPE FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE = ? AND TABLE_SCHEMA = ?", p.grantee, p.database)
	}
	return p
}

func privilegeSet(ctx context.Context, db *sql.DB, query string, args ...any) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read privileges: %w", err)
	}
	defer rows.Close()
	set := map[string]bool{}
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, fmt.Errorf("read privileges: %w", err)
		}
		set[strings.ToUpper(p)] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read privileges: %w", err)
	}
	return set, nil
}

// createPrivilege is the missing privilege that keeps the table strategy
// from creating its table, or nil.
func createPrivilege(p privileges) *dialects.MissingPrivilege {
	const neededFor = "the table strategy creating its lock table (or have it created in advance by a user that may)"
	switch {
	case p.err != nil:
		return nil
	case p.database == "":
		return &dialects.MissingPrivilege{
			Privilege: "a default database",
			NeededFor: neededFor + "; name the database in the DSN, e.g. mysql://user@host:3306/jobs",
		}
	case !p.has("CREATE"):
		return &dialects.MissingPrivilege{
			Privilege: "CREATE on " + quoteIdent(p.database),
			NeededFor: neededFor,
			Grant:     "GRANT CREATE ON " + quoteIdent(p.database) + ".* TO " + p.grantee,
		}
	}
	return nil
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// probeIsolation reads the session's default isolation level.
func probeIsolation(ctx context.Context, db *sql.DB) dialects.Capability {
	var level string
	err := db.QueryRowContext(ctx, "SELECT @@transaction_isolation").Scan(&level)
	if mysqlErrorNumber(err) == errUnknownSystemVariable {
		err = db.QueryRowContext(ctx, "SELECT @@tx_isolation").Scan(&level)
	}
	if err != nil {
		return dialects.CapUnknown("cannot read the isolation level: "+err.Error(), "")
	}
	return dialects.CapYes(strings.ToLower(strings.ReplaceAll(level, "-", " ")))
}

// probeLockListing says whether GET_LOCK locks can be listed with their
// holder: performance_schema.metadata_locks with the MDL instrument on
// MySQL (and MariaDB 10.5.2+), information_schema.METADATA_LOCK_INFO from
// the metadata_lock_info plugin on MariaDB; never on TiDB.
func probeLockListing(ctx context.Context, db *sql.DB, info dialects.Info, p privileges) dialects.Capability {
	byName := "; until then " + string(dialects.TermFindLock) + " still finds a lock's holder through IS_USED_LOCK"
	switch {
	case info.Product == dialects.ProductTiDB:
		return dialects.CapNo("TiDB cannot list user locks or name their holder (IS_USED_LOCK answers 1)", "").
			Fixed(dialects.UseTableStrategy, ": "+string(dialects.TermListLocks)+" lists the lease table")
	case info.Product == dialects.ProductMariaDB:
		var status string
		err := db.QueryRowContext(ctx, "SELECT PLUGIN_STATUS FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'METADATA_LOCK_INFO'").Scan(&status)
		if err == nil && strings.EqualFold(status, "ACTIVE") {
			return dialects.CapYes("proved: the metadata_lock_info plugin is active (information_schema.METADATA_LOCK_INFO)")
		}
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return dialects.CapUnknown("cannot read information_schema.PLUGINS: "+err.Error(), "")
		}
		plugin := "INSTALL SONAME 'metadata_lock_info' (needs a user with INSERT on mysql.plugin)"
		if !versionAtLeast(info.Version, 10, 5, 2) {
			return dialects.CapNo("the metadata_lock_info plugin is not installed", plugin+byName)
		}
		c := performanceSchemaListing(ctx, db, p)
		if c.Supported || c.Status == dialects.StatusUnknown {
			return c
		}
		return dialects.CapNo("the metadata_lock_info plugin is not installed and "+c.Detail, plugin+", or "+c.Remedy+byName)
	}
	c := performanceSchemaListing(ctx, db, p)
	if c.Status == dialects.StatusNo {
		c.Remedy += byName
	}
	return c
}

// performanceSchemaListing proves that performance_schema.metadata_locks
// records user locks and is readable by this user.
func performanceSchemaListing(ctx context.Context, db *sql.DB, p privileges) dialects.Capability {
	var on sql.NullInt64
	if err := db.QueryRowContext(ctx, "SELECT @@performance_schema").Scan(&on); err != nil {
		return dialects.CapUnknown("cannot read @@performance_schema: "+err.Error(), "")
	}
	if on.Int64 == 0 {
		return dialects.CapNo("performance_schema is OFF",
			"set performance_schema=ON and performance-schema-instrument='"+mdlInstrument+"=ON' in the server configuration and restart it")
	}
	var enabled string
	err := db.QueryRowContext(ctx, "SELECT ENABLED FROM performance_schema.setup_instruments WHERE NAME = ?", mdlInstrument).Scan(&enabled)
	switch {
	case mysqlErrorNumber(err) == errTableAccessDenied:
		return dialects.CapNo("performance_schema is not readable by this user", "GRANT SELECT ON performance_schema.* TO "+p.grantee)
	case errors.Is(err, sql.ErrNoRows):
		return dialects.CapNo("performance_schema has no "+mdlInstrument+" instrument", "upgrade the server")
	case err != nil:
		return dialects.CapUnknown("cannot read performance_schema.setup_instruments: "+err.Error(), "")
	case !strings.EqualFold(enabled, "YES"):
		return dialects.CapNo("the "+mdlInstrument+" instrument is disabled",
			"UPDATE performance_schema.setup_instruments SET ENABLED = 'YES', TIMED = 'YES' WHERE NAME = '"+mdlInstrument+
				"' (and performance-schema-instrument='"+mdlInstrument+"=ON' in the server configuration to keep it after a restart)")
	}
	var n int64
	err = db.QueryRowContext(ctx, "SELECT COUNT(*) FROM performance_schema.metadata_locks WHERE OBJECT_TYPE = 'USER LEVEL LOCK'").Scan(&n)
	switch {
	case mysqlErrorNumber(err) == errTableAccessDenied:
		return dialects.CapNo("performance_schema.metadata_locks is not readable by this user", "GRANT SELECT ON performance_schema.* TO "+p.grantee)
	case err != nil:
		return dialects.CapUnknown("cannot read performance_schema.metadata_locks: "+err.Error(), "")
	}
	return dialects.CapYes(fmt.Sprintf("proved: performance_schema.metadata_locks records user locks (%d now)", n))
}

// killCapability says whether the current user may KILL other users'
// sessions: SUPER, or CONNECTION_ADMIN (MySQL 8) / CONNECTION ADMIN
// (MariaDB 10.5.2+). Everyone may kill their own user's sessions. When the
// privilege is missing it is also returned as a MissingPrivilege.
func killCapability(ctx context.Context, db *sql.DB, info dialects.Info, p privileges) (dialects.Capability, *dialects.MissingPrivilege) {
	if p.err != nil {
		return dialects.CapUnknown(p.err.Error(), ""), nil
	}
	for _, priv := range []string{"SUPER", "CONNECTION_ADMIN", "CONNECTION ADMIN"} {
		if p.global[priv] {
			return dialects.CapYes(fmt.Sprintf("%s has %s: KILL may end any session", p.grantee, priv)), nil
		}
	}
	var pe *dialects.PrivilegeError
	if !errors.As((&SessionOps{Info: info}).privilegeError(ctx, db, nil), &pe) {
		return dialects.CapUnknown("cannot name the KILL privilege", ""), nil
	}
	return dialects.CapNo(fmt.Sprintf("%s may KILL only its own user's sessions (no SUPER or %s)", p.grantee, pe.Privilege), pe.Grant),
		&dialects.MissingPrivilege{
			Privilege: pe.Privilege,
			NeededFor: string(dialects.TermKillSession) + ": terminating another user's session to free its GET_LOCK lock",
			Grant:     pe.Grant,
		}
}

// rowLockFacts says what the product and version promise for SKIP LOCKED
// and NOWAIT (docs/dialects.md, each product's claim strategy); a probe
// replaces them when it runs.
func rowLockFacts(info dialects.Info) (skip, nowait dialects.Capability) {
	const claimRemedy = "claim rows optimistically (UPDATE … WHERE version = ?)"
	v := info.Version
	switch info.Product {
	case dialects.ProductTiDB:
		skip = dialects.CapNo("by version: TiDB parses SKIP LOCKED but takes no lock (two transactions get the same row)", claimRemedy)
		nowait = dialects.CapUnknown("by version: not documented for TiDB; FOR UPDATE blocks only in pessimistic transactions", "")
	case dialects.ProductMariaDB:
		if versionAtLeast(v, 10, 6) {
			skip = dialects.CapYes("by version: MariaDB " + v + " (SKIP LOCKED since 10.6)")
		} else {
			skip = dialects.CapNo("by version: MariaDB "+v+" (SKIP LOCKED arrived in 10.6)", "upgrade to MariaDB 10.6+, or "+claimRemedy)
		}
		if versionAtLeast(v, 10, 3) {
			nowait = dialects.CapYes("by version: MariaDB " + v + " (NOWAIT since 10.3)")
		} else {
			nowait = dialects.CapNo("by version: MariaDB "+v+" (NOWAIT arrived in 10.3)", "upgrade to MariaDB 10.3+")
		}
	default:
		if versionAtLeast(v, 8, 0, 1) {
			skip = dialects.CapYes("by version: MySQL " + v + " (SKIP LOCKED since 8.0.1)")
			nowait = dialects.CapYes("by version: MySQL " + v + " (NOWAIT since 8.0.1)")
		} else {
			skip = dialects.CapNo("by version: MySQL "+v+" (SKIP LOCKED arrived in 8.0.1)", "upgrade to MySQL 8.0.1+, or "+claimRemedy)
			nowait = dialects.CapNo("by version: MySQL "+v+" (NOWAIT arrived in 8.0.1)", "upgrade to MySQL 8.0.1+, or lower innodb_lock_wait_timeout")
		}
	}
	return skip, nowait
}

// rowLockProbe is the SKIP LOCKED / NOWAIT probe on InnoDB table t; on TiDB
// the holder's transaction is pessimistic, so its FOR UPDATE really locks.
func rowLockProbe(t string, info dialects.Info) sqlkit.RowLockProbe {
	p := sqlkit.RowLockProbe{
		Create:     "CREATE TABLE " + t + " (id INT PRIMARY KEY) ENGINE=InnoDB",
		Insert:     "INSERT INTO " + t + " (id) VALUES (1)",
		Lock:       "SELECT id FROM " + t + " WHERE id = 1 FOR UPDATE",
		SkipLocked: "SELECT id FROM " + t + " WHERE id = 1 FOR UPDATE SKIP LOCKED",
		NoWait:     "SELECT id FROM " + t + " WHERE id = 1 FOR UPDATE NOWAIT",
		Drop:       "DROP TABLE IF EXISTS " + t,
		NotSupported: func(err error) bool {
			n := mysqlErrorNumber(err)
			return n == errParse || n == errSyntax || n == errNotSupportedYet
		},
		Refused: func(err error) bool {
			n := mysqlErrorNumber(err)
			return n == errLockNoWait || n == errLockWaitTimeout
		},
	}
	if info.Product == dialects.ProductTiDB {
		p.Begin = "BEGIN PESSIMISTIC"
	}
	return p
}

// mysqlErrorNumber is the server error number inside err, or 0.
func mysqlErrorNumber(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}
