package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// LockAdmin is the MySQL family's dialects.LockAdmin: lock tables from
// information_schema; GET_LOCK locks from performance_schema (MySQL 8,
// MariaDB 10.5.2+ with the metadata-lock instrument), from MariaDB's
// metadata_lock_info plugin, or one name at a time from IS_USED_LOCK; KILL
// to free them.
type LockAdmin struct {
	DB *sql.DB
	// Info is the server (Backend.Info).
	Info dialects.Info
	// Database is the scope of LockName (Backend.Database).
	Database string
	// Names is how session locks are named (see SessionOps.Names).
	Names dialects.SessionNames
}

var _ dialects.LockAdmin = (*LockAdmin)(nil)

// ops are the session statements a's locks are named by.
func (a *LockAdmin) ops() *SessionOps {
	return &SessionOps{Info: a.Info, Database: a.Database, Names: a.Names}
}

// Sources of listed session locks.
const (
	SourcePerformanceSchema = "performance_schema.metadata_locks"
	SourceMetadataLockInfo  = "information_schema.METADATA_LOCK_INFO"
	SourceIsUsedLock        = "IS_USED_LOCK"
)

// userLockInstrument is the performance_schema instrument that records user
// locks in metadata_locks.
const userLockInstrument = "wait/lock/metadata/sql/mdl"

// lockTablesSQL finds the known lock tables in the current database, in
// any letter case (table names are case-sensitive on most platforms).
const lockTablesSQL = `SELECT TABLE_NAME FROM information_schema.TABLES
WHERE TABLE_SCHEMA = DATABASE() AND LOWER(TABLE_NAME) IN (%s) ORDER BY TABLE_NAME`

// LockTables returns the dialects.KnownTables that exist in the current
// database, spelled as the server stores them, in KnownTables order.
func (a *LockAdmin) LockTables(ctx context.Context) ([]dialects.Table, error) {
	known := dialects.KnownTables()
	args := make([]any, len(known))
	marks := make([]string, len(known))
	for i, t := range known {
		args[i] = strings.ToLower(t.Name)
		marks[i] = "?"
	}
	rows, err := a.DB.QueryContext(ctx, fmt.Sprintf(lockTablesSQL, strings.Join(marks, ", ")), args...)
	if err != nil {
		return nil, dialects.Wrap(Name, "find lock tables", fmt.Errorf("read information_schema.TABLES: %w", err))
	}
	defer rows.Close()
	spelled := map[string]string{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, dialects.Wrap(Name, "find lock tables", err)
		}
		if _, dup := spelled[strings.ToLower(name)]; !dup {
			spelled[strings.ToLower(name)] = name
		}
	}
	if err := rows.Err(); err != nil {
		return nil, dialects.Wrap(Name, "find lock tables", err)
	}
	var out []dialects.Table
	for _, t := range known {
		if name, ok := spelled[strings.ToLower(t.Name)]; ok {
			out = append(out, dialects.Table{Preset: t.Preset, Name: name})
		}
	}
	return out, nil
}

// listingProbeSQL reads, in one round trip, whether performance_schema is
// on, whether it has metadata_locks (MySQL 5.7+, MariaDB 10.5.2+) and
// whether MariaDB's metadata_lock_info plugin is active.
const listingProbeSQL = `SELECT @@performance_schema,
  (SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'performance_schema' AND TABLE_NAME = 'metadata_locks'),
  (SELECT COUNT(*) FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'METADATA_LOCK_INFO' AND PLUGIN_STATUS = 'ACTIVE')`

const instrumentSQL = `SELECT ENABLED FROM performance_schema.setup_instruments WHERE NAME = ?`

// nowMs is the database clock as epoch milliseconds.
const nowMs = "TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(3)) DIV 1000"

// perfSchemaLocksSQL lists user locks, granted and pending, with the
// owning connection and the program name the client announced.
const perfSchemaLocksSQL = `SELECT m.OBJECT_NAME, m.LOCK_STATUS, t.PROCESSLIST_ID,
  COALESCE(t.PROCESSLIST_USER, ''), COALESCE(t.PROCESSLIST_HOST, ''),
  COALESCE((SELECT c.ATTR_VALUE FROM performance_schema.session_connect_attrs c
            WHERE c.PROCESSLIST_ID = t.PROCESSLIST_ID AND c.ATTR_NAME = 'program_name' LIMIT 1), ''),
  ` + nowMs + `
FROM performance_schema.metadata_locks m JOIN performance_schema.threads t ON t.THREAD_ID = m.OWNER_THREAD_ID
WHERE m.OBJECT_TYPE = 'USER LEVEL LOCK' AND m.LOCK_STATUS IN ('GRANTED', 'PENDING')
ORDER BY m.OBJECT_NAME, m.LOCK_STATUS, t.PROCESSLIST_ID`

// metadataLockInfoSQL lists the user locks MariaDB's plugin shows (granted
// ones only; the lock name is in TABLE_SCHEMA).
const metadataLockInfoSQL = `SELECT m.TABLE_SCHEMA, 'GRANTED', m.THREAD_ID, COALESCE(p.USER, ''), COALESCE(p.HOST, ''), '',
  ` + nowMs + `
FROM information_schema.METADATA_LOCK_INFO m LEFT JOIN information_schema.PROCESSLIST p ON p.ID = m.THREAD_ID
WHERE m.LOCK_TYPE = 'User lock'
ORDER BY m.TABLE_SCHEMA, m.THREAD_ID`

// isUsedLockSQL finds the connection holding one lock, and its user and
// client address where the processlist shows them.
const isUsedLockSQL = `SELECT l.id, COALESCE(p.USER, ''), COALESCE(p.HOST, ''), ` + nowMs + `
FROM (SELECT IS_USED_LOCK(?) AS id) l LEFT JOIN information_schema.PROCESSLIST p ON p.ID = l.id`

// SessionLocks lists the GET_LOCK locks of the whole server (they are not
// per database), each with its GET_LOCK name as the entry's Key. A stored
// name that is LockName of one of names is shown as that name; another
// name of this database (see NameFromLock) as the name it reverses to; a
// name of another database or of another tool (Atlas, Flyway,
// golang-migrate) has no Name, only its Key; a migration tool's name for
// this database (ToolNames) has the tool as its Tool. Where neither performance_schema nor the metadata_lock_info
// plugin can list them, the error is a *dialects.ListingUnavailableError
// saying what to enable.
func (a *LockAdmin) SessionLocks(ctx context.Context, names []string) ([]dialects.LockEntry, error) {
	query, source, err := a.listingSource(ctx)
	if err != nil {
		return nil, dialects.Wrap(Name, "list session locks", err)
	}
	tools := ToolNames(a.Database)
	labels := make(map[string]string, len(names))
	for _, n := range names {
		labels[a.ops().serverName(n)] = n
	}
	rows, err := a.DB.QueryContext(ctx, query)
	if err != nil {
		return nil, dialects.Wrap(Name, "list session locks", fmt.Errorf("read %s: %w", source, err))
	}
	defer rows.Close()
	out := []dialects.LockEntry{}
	for rows.Next() {
		var (
			name, status, user, host, app string
			id                            int64
			dbNow                         sql.NullInt64
		)
		if err := rows.Scan(&name, &status, &id, &user, &host, &app, &dbNow); err != nil {
			return nil, dialects.Wrap(Name, "list session locks", fmt.Errorf("read %s: %w", source, err))
		}
		state := dialects.StateHeld
		if status == "PENDING" {
			state = dialects.StateWaiting
		}
		stored := name
		name = a.lockNameOf(stored, labels)
		out = append(out, dialects.LockEntry{
			Name: name, Key: stored, Tool: tools[stored], State: state, Strategy: dialects.StrategySession, Source: source,
			DBNow:  sqlkit.NullMillis(dbNow),
			Holder: &dialects.Holder{SessionID: strconv.FormatInt(id, 10), User: user, Client: host, Application: app},
		})
	}
	if err := rows.Err(); err != nil {
		return nil, dialects.Wrap(Name, "list session locks", fmt.Errorf("read %s: %w", source, err))
	}
	return out, nil
}

// listingSource picks the view that lists user locks on this server, or
// says what to enable.
func (a *LockAdmin) listingSource(ctx context.Context) (query, source string, err error) {
	var perfSchema, hasMDLTable, hasPlugin sql.NullInt64
	if err := a.DB.QueryRowContext(ctx, listingProbeSQL).Scan(&perfSchema, &hasMDLTable, &hasPlugin); err != nil {
		return "", "", fmt.Errorf("probe lock listing: %w", err)
	}
	perfSchemaOn := perfSchema.Int64 == 1 && hasMDLTable.Int64 > 0
	instrumentOn := false
	if perfSchemaOn {
		var enabled sql.NullString
		err := a.DB.QueryRowContext(ctx, instrumentSQL, userLockInstrument).Scan(&enabled)
		instrumentOn = err == nil && strings.EqualFold(enabled.String, "YES")
	}
	switch {
	case perfSchemaOn && instrumentOn:
		return perfSchemaLocksSQL, SourcePerformanceSchema, nil
	case hasPlugin.Int64 > 0:
		return metadataLockInfoSQL, SourceMetadataLockInfo, nil
	}
	return "", "", a.unavailable(perfSchema.Int64 == 1, hasMDLTable.Int64 > 0)
}

// unavailable says why this server cannot list user locks and what turns
// listing on.
func (a *LockAdmin) unavailable(perfSchemaOn, hasMDLTable bool) error {
	enableInstrument := "UPDATE performance_schema.setup_instruments SET ENABLED = 'YES', TIMED = 'YES' WHERE NAME = '" + userLockInstrument + "'"
	switch {
	case a.Info.Product == dialects.ProductMariaDB && !perfSchemaOn:
		return &dialects.ListingUnavailableError{
			Reason: "MariaDB lists user locks only through the metadata_lock_info plugin (not installed) or performance_schema (OFF)",
			Enable: "INSTALL SONAME 'metadata_lock_info'",
		}
	case a.Info.Product == dialects.ProductMariaDB && !hasMDLTable:
		return &dialects.ListingUnavailableError{
			Reason: "MariaDB " + a.Info.Version + " has no performance_schema.metadata_locks (from 10.5.2) and the metadata_lock_info plugin is not installed",
			Enable: "INSTALL SONAME 'metadata_lock_info'",
		}
	case a.Info.Product == dialects.ProductMariaDB:
		return &dialects.ListingUnavailableError{
			Reason: "the performance_schema instrument " + userLockInstrument + " is disabled and the metadata_lock_info plugin is not installed",
			Enable: enableInstrument + ", or INSTALL SONAME 'metadata_lock_info'",
		}
	case !perfSchemaOn:
		return &dialects.ListingUnavailableError{
			Reason: "performance_schema is OFF",
			Enable: "start the server with performance_schema=ON",
		}
	default:
		return &dialects.ListingUnavailableError{
			Reason: "the performance_schema instrument " + userLockInstrument + " is disabled (the default before MySQL 8.0)",
			Enable: enableInstrument,
		}
	}
}

// lockNameOf is the lock name a listed GET_LOCK name stands for (see
// SessionLocks): "" when it is not a name of this database; with raw
// session names every GET_LOCK name is the name of its lock.
func (a *LockAdmin) lockNameOf(stored string, labels map[string]string) string {
	if label, ok := labels[stored]; ok {
		return label
	}
	if a.Names.Raw {
		return stored
	}
	name, _ := NameFromLock(a.Database, stored)
	return name
}

// SessionLock returns the connection holding the lock called name, from
// IS_USED_LOCK(LockName(name)) (of name itself with raw session names),
// which every server answers; its user and
// client come from the processlist (other users' connections need the
// PROCESS privilege to show them).
func (a *LockAdmin) SessionLock(ctx context.Context, name string) (dialects.LockEntry, bool, error) {
	if err := dialects.CheckName(name); err != nil {
		return dialects.LockEntry{}, false, dialects.Wrap(Name, "find session lock", err)
	}
	if a.Names.Raw && checkRawName(name) != nil {
		return dialects.LockEntry{}, false, nil // no GET_LOCK can hold it
	}
	var (
		id         sql.NullInt64
		user, host string
		dbNow      sql.NullInt64
	)
	if err := a.DB.QueryRowContext(ctx, isUsedLockSQL, a.ops().serverName(name)).Scan(&id, &user, &host, &dbNow); err != nil {
		return dialects.LockEntry{}, false, dialects.Wrap(Name, "find session lock", fmt.Errorf("IS_USED_LOCK: %w", err))
	}
	if !id.Valid {
		return dialects.LockEntry{}, false, nil
	}
	return dialects.LockEntry{
		Name: name, Key: a.ops().serverName(name), State: dialects.StateHeld, Strategy: dialects.StrategySession, Source: SourceIsUsedLock,
		DBNow:  sqlkit.NullMillis(dbNow),
		Holder: &dialects.Holder{SessionID: strconv.FormatInt(id.Int64, 10), User: user, Client: host, Application: a.programName(ctx, id.Int64)},
	}, true, nil
}

// programNameSQL reads the program_name connection attribute of one
// connection; performance_schema off leaves the view empty.
const programNameSQL = `SELECT ATTR_VALUE FROM performance_schema.session_connect_attrs
WHERE PROCESSLIST_ID = ? AND ATTR_NAME = '` + ProgramNameAttribute + `' LIMIT 1`

// programName is the program name connection id announced, or "" when
// the server does not show it (performance_schema off, no privilege).
func (a *LockAdmin) programName(ctx context.Context, id int64) string {
	var app sql.NullString
	if err := a.DB.QueryRowContext(ctx, programNameSQL, id).Scan(&app); err != nil {
		return ""
	}
	return app.String
}

// Kill terminates the connection with KILL (see SessionOps.kill).
func (a *LockAdmin) Kill(ctx context.Context, sessionID string) error {
	return a.ops().kill(ctx, a.DB, sessionID)
}

// LiquibaseInspect reads Liquibase's lock row with LOCKGRANTED (a DATETIME
// that Liquibase writes with NOW(), in the writer's session time zone)
// converted in this session's time zone, and the database clock, both as
// epoch milliseconds.
func (b *Builder) LiquibaseInspect(table string) string {
	return "SELECT LOCKED, CAST(UNIX_TIMESTAMP(LOCKGRANTED) * 1000 AS SIGNED), LOCKEDBY, " + nowMs +
		" FROM " + table + " WHERE ID = 1"
}

// LiquibaseRelease clears Liquibase's lock row: LOCKED = ? (false, sent as
// 0, which BIT(1) and TINYINT(1) both take), LOCKGRANTED and LOCKEDBY NULL,
// where ID = 1 and LOCKED = ? (true) and, when guarded, LOCKEDBY = ?.
func (b *Builder) LiquibaseRelease(table string, guarded bool) string {
	sql := "UPDATE " + table + " SET LOCKED = ?, LOCKGRANTED = NULL, LOCKEDBY = NULL WHERE ID = 1 AND LOCKED = ?"
	if guarded {
		sql += " AND LOCKEDBY = ?"
	}
	return sql
}
