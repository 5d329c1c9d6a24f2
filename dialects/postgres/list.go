package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// LockAdmin is the PostgreSQL family's dialects.LockAdmin: lock tables from
// information_schema, advisory locks from pg_locks joined with
// pg_stat_activity, pg_terminate_backend to free them. Backend.NewLockAdmin
// makes it.
type LockAdmin struct {
	DB *sql.DB
	// Catalog names the views and functions it reads and calls; nil means
	// the PostgreSQL names (PostgresCatalog).
	Catalog *Catalog
	// Names are the session names the DSN asked for: the key of a raw
	// name comes from its derivation, scoped names (the default) take Key.
	Names dialects.SessionNames
}

var _ dialects.LockAdmin = (*LockAdmin)(nil)

// catalog is the catalog a's statements use.
func (a *LockAdmin) catalog() Catalog {
	if a.Catalog != nil {
		return *a.Catalog
	}
	return PostgresCatalog
}

// SourcePgLocks is the Source of listed advisory locks.
const SourcePgLocks = "pg_locks"

// lockTablesSQL finds the known lock tables in the schemas of the search
// path, where unqualified names resolve (PostgreSQL folds them to lower
// case, so only lower-case tables are found).
const lockTablesSQL = `SELECT DISTINCT table_name::text FROM information_schema.tables
WHERE table_schema = ANY (current_schemas(false)) AND table_name IN (%s)`

// LockTables returns the dialects.KnownTables that exist in the search
// path, in KnownTables order.
func (a *LockAdmin) LockTables(ctx context.Context) ([]dialects.Table, error) {
	known := dialects.KnownTables()
	args := make([]any, len(known))
	marks := make([]string, len(known))
	for i, t := range known {
		args[i] = strings.ToLower(t.Name)
		marks[i] = "$" + strconv.Itoa(i+1) + "::text"
	}
	rows, err := a.DB.QueryContext(ctx, fmt.Sprintf(lockTablesSQL, strings.Join(marks, ", ")), args...)
	if err != nil {
		return nil, dialects.Wrap(Name, "find lock tables", fmt.Errorf("read information_schema.tables: %w", err))
	}
	defer rows.Close()
	exists := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, dialects.Wrap(Name, "find lock tables", err)
		}
		exists[name] = true
	}
	if err := rows.Err(); err != nil {
		return nil, dialects.Wrap(Name, "find lock tables", err)
	}
	var out []dialects.Table
	for _, t := range known {
		if name := strings.ToLower(t.Name); exists[name] {
			out = append(out, dialects.Table{Preset: t.Preset, Name: name})
		}
	}
	return out, nil
}

// advisoryLocksSQL lists the advisory locks of the current database (their
// tags include it) with the session of each holder or waiter, from the
// views of catalog c (pg_locks or KingbaseES's sys_locks, …). classid and
// objid are unsigned oids, read as bigint; objsubid 1 marks a bigint key
// (classid its high, objid its low 32 bits), 2 a pair of int4 keys.
// client_port -1 means a Unix socket.
func advisoryLocksSQL(c Catalog) string {
	return `SELECT l.classid::bigint, l.objid::bigint, l.objsubid::integer, l.granted, l.pid,
  COALESCE(a.usename::text, ''),
  CASE WHEN a.client_addr IS NOT NULL THEN host(a.client_addr) WHEN a.client_port = -1 THEN 'local' ELSE '' END,
  COALESCE(a.application_name, ''),
  floor(extract(epoch FROM a.backend_start) * 1000)::bigint,
  floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint
FROM ` + c.Locks + ` l LEFT JOIN ` + c.Activity + ` a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.database = (SELECT oid FROM ` + c.Database + ` WHERE datname = current_database())`
}

// advisoryKeyFilter narrows advisoryLocksSQL to one bigint key.
const advisoryKeyFilter = ` AND l.objsubid = 1 AND l.classid::bigint = $1::bigint AND l.objid::bigint = $2::bigint`

const advisoryOrder = ` ORDER BY l.classid, l.objid, l.objsubid, l.granted DESC, l.pid`

// SessionLocks lists the advisory locks of the current database, granted
// (held) and awaited (waiting), each with its session. A bigint key that is
// Key(n) for one of names is labelled n; other keys have no name. A key a
// migration tool takes in this database and schema (ToolKeys) gets the
// tool's name as its Tool. pg_locks
// is readable by every user; without pg_read_all_stats the session details
// of other users' backends may be empty.
func (a *LockAdmin) SessionLocks(ctx context.Context, names []string) ([]dialects.LockEntry, error) {
	labels := make(map[int64]string, len(names))
	for _, n := range names {
		labels[a.key(n)] = n
	}
	entries, err := a.query(ctx, advisoryLocksSQL(a.catalog())+advisoryOrder, labels)
	if err == nil {
		err = a.labelTools(ctx, entries)
	}
	return entries, dialects.Wrap(Name, "list session locks", err)
}

// LockKey is the key of name's advisory lock in decimal, as LockEntry.Key
// shows it (see Key): the listing names a lock by it (sqlkit.SessionKeyer).
func (a *LockAdmin) LockKey(name string) string { return strconv.FormatInt(a.key(name), 10) }

// SessionLock returns the backend holding the advisory lock of name in
// the current database.
func (a *LockAdmin) SessionLock(ctx context.Context, name string) (dialects.LockEntry, bool, error) {
	if err := dialects.CheckName(name); err != nil {
		return dialects.LockEntry{}, false, dialects.Wrap(Name, "find session lock", err)
	}
	if a.checkLockName(name) != nil {
		return dialects.LockEntry{}, false, nil // no key: nothing holds it
	}
	key := a.key(name)
	classid, objid := KeyParts(key)
	entries, err := a.query(ctx, advisoryLocksSQL(a.catalog())+advisoryKeyFilter+advisoryOrder, map[int64]string{key: name}, int64(classid), int64(objid))
	if err != nil {
		return dialects.LockEntry{}, false, dialects.Wrap(Name, "find session lock", err)
	}
	for _, e := range entries {
		if e.State == dialects.StateHeld {
			return e, true, nil
		}
	}
	return dialects.LockEntry{}, false, nil
}

// Kill terminates the backend with the catalog's pg_terminate_backend (or
// sys_terminate_backend) and waits for it to end (see SessionOps.kill).
func (a *LockAdmin) Kill(ctx context.Context, sessionID string) error {
	return SessionOps{Catalog: a.Catalog}.kill(ctx, a.DB, sessionID)
}

func (a *LockAdmin) query(ctx context.Context, query string, labels map[int64]string, args ...any) ([]dialects.LockEntry, error) {
	rows, err := a.DB.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read pg_locks: %w", err)
	}
	defer rows.Close()
	out := []dialects.LockEntry{}
	for rows.Next() {
		var (
			classid, objid      int64
			objsubid            int
			granted             bool
			pid                 int64
			user, client, app   string
			backendStart, dbNow sql.NullInt64
		)
		if err := rows.Scan(&classid, &objid, &objsubid, &granted, &pid, &user, &client, &app, &backendStart, &dbNow); err != nil {
			return nil, fmt.Errorf("read pg_locks: %w", err)
		}
		e := dialects.LockEntry{
			State:    dialects.StateWaiting,
			Strategy: dialects.StrategySession,
			Source:   SourcePgLocks,
			DBNow:    sqlkit.NullMillis(dbNow),
			Holder: &dialects.Holder{
				SessionID: strconv.FormatInt(pid, 10), User: user, Client: client, Application: app,
				Since: sqlkit.NullMillis(backendStart),
			},
		}
		if granted {
			e.State = dialects.StateHeld
		}
		if objsubid == 1 {
			key := KeyFromParts(uint32(classid), uint32(objid))
			e.Key = strconv.FormatInt(key, 10)
			e.Name = labels[key]
		} else {
			e.Key = strconv.FormatInt(int64(int32(uint32(classid))), 10) + "," + strconv.FormatInt(int64(int32(uint32(objid))), 10)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read pg_locks: %w", err)
	}
	return out, nil
}

// LiquibaseInspect reads Liquibase's lock row with LOCKGRANTED (a
// timestamp without time zone that Liquibase writes with now(), in the
// writer's session time zone) read in this session's time zone, and the
// database clock, both as epoch milliseconds.
func (Builder) LiquibaseInspect(table string) string {
	return "SELECT locked, " + epochMs("lockgranted::timestamptz") + ", lockedby, " + epochMs("clock_timestamp()") +
		" FROM " + table + " WHERE id = 1"
}

// LiquibaseRelease clears Liquibase's lock row: locked = $1 (false),
// lockgranted and lockedby NULL, where id = 1 and locked = $2 (true) and,
// when guarded, lockedby = $3.
func (Builder) LiquibaseRelease(table string, guarded bool) string {
	sql := "UPDATE " + table + " SET locked = $1::boolean, lockgranted = NULL, lockedby = NULL WHERE id = 1 AND locked = $2::boolean"
	if guarded {
		sql += " AND lockedby = $3::text"
	}
	return sql
}
