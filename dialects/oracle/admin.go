package oracle

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/oralike"
)

// Sources of listed session locks (dialects.LockEntry.Source).
const (
	// SourceLockViews: GV$LOCK joined to SYS.DBMS_LOCK_ALLOCATED and
	// GV$SESSION.
	SourceLockViews = "gv$lock"
	// SourceRequestTest: a zero-wait DBMS_LOCK.REQUEST, which tells a held
	// lock from a free one but names no holder.
	SourceRequestTest = "DBMS_LOCK.REQUEST"
)

// lockTablesSQL finds the known lock tables where an unqualified name
// resolves: tables of the current schema, then private synonyms of the
// current schema that point at a table this user can see (ALL_TABLES),
// :1–:4 and :5–:8 being the known names in upper case, as Oracle stores
// unquoted names. Public synonyms are not searched.
const lockTablesSQL = "SELECT t.table_name, 0 FROM all_tables t" +
	" WHERE t.owner = SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA') AND t.table_name IN (:1, :2, :3, :4)" +
	" UNION ALL SELECT s.synonym_name, 1 FROM all_synonyms s" +
	" JOIN all_tables t ON t.owner = s.table_owner AND t.table_name = s.table_name" +
	" WHERE s.owner = SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA') AND s.db_link IS NULL AND s.synonym_name IN (:5, :6, :7, :8)" +
	" ORDER BY 2, 1"

// LockAdmin is Oracle's dialects.LockAdmin: lock tables from ALL_TABLES
// and ALL_SYNONYMS, DBMS_LOCK locks from GV$LOCK (type 'UL') joined to
// SYS.DBMS_LOCK_ALLOCATED and GV$SESSION, and ALTER SYSTEM KILL SESSION to
// free them.
//
// Session locks are listed under the schedlock name they carry (see
// LockName); locks that other applications allocated through DBMS_LOCK
// have no schedlock name and are listed with an empty Name and their
// DBMS_LOCK name as Key. Holder.SessionID is "sid,serial#,@inst_id", the
// form Kill takes.
type LockAdmin struct {
	DB   *sql.DB
	Info dialects.Info
	// Ops runs the DBMS_LOCK statements and the kill (default: a zero
	// SessionOps, so a kill waits DefaultKillWait for the locks to go).
	Ops *SessionOps
}

var _ dialects.LockAdmin = (*LockAdmin)(nil)

func (a *LockAdmin) ops() *SessionOps {
	if a.Ops == nil {
		return &SessionOps{}
	}
	return a.Ops
}

// LockTables returns the dialects.KnownTables that exist in the current
// schema, as tables or as private synonyms of tables, spelled as Oracle
// stores them (upper case), in KnownTables order. A table created with a
// quoted lower-case name is not found: an unquoted name does not resolve
// to it either.
func (a *LockAdmin) LockTables(ctx context.Context) ([]dialects.Table, error) {
	known := dialects.KnownTables()
	args := make([]any, 0, 2*len(known))
	for range 2 {
		for _, t := range known {
			args = append(args, strings.ToUpper(t.Name))
		}
	}
	rows, err := a.DB.QueryContext(ctx, lockTablesSQL, args...)
	if err != nil {
		return nil, dialects.Wrap(Name, "find lock tables", fmt.Errorf("read all_tables: %w", err))
	}
	defer rows.Close()
	found := map[string]bool{}
	for rows.Next() {
		var name string
		var rank int64
		if err := rows.Scan(&name, &rank); err != nil {
			return nil, dialects.Wrap(Name, "find lock tables", err)
		}
		found[name] = true
	}
	if err := rows.Err(); err != nil {
		return nil, dialects.Wrap(Name, "find lock tables", err)
	}
	out := []dialects.Table{}
	for _, t := range known {
		if name := strings.ToUpper(t.Name); found[name] {
			out = append(out, dialects.Table{Preset: t.Preset, Name: name})
		}
	}
	return out, nil
}

// SessionLocks lists the DBMS_LOCK locks held or awaited on the database
// (every RAC instance). A lock whose DBMS_LOCK name is LockName of one of
// names is listed under that name. Without SELECT on the views the error
// is a *dialects.ListingUnavailableError carrying the GRANTs.
func (a *LockAdmin) SessionLocks(ctx context.Context, names []string) ([]dialects.LockEntry, error) {
	locks, err := readSessionLocks(ctx, a.DB, listSessionLocksSQL)
	if err != nil {
		return nil, a.listingError(err)
	}
	labels := make(map[string]string, len(names))
	for _, n := range names {
		if n != "" {
			labels[LockName(n)] = n
		}
	}
	out := make([]dialects.LockEntry, 0, len(locks))
	for _, l := range locks {
		out = append(out, sessionEntry(l, labels[l.LockName]))
	}
	return out, nil
}

// SessionLock returns the session holding the lock called name, from the
// lock views. Where this user may not read them it still tells a held
// lock from a free one, without naming the holder, by asking DBMS_LOCK:
// a zero-wait exclusive REQUEST on a pooled connection, given back at once
// when it is granted (the lock was free). For that one round trip the lock
// is taken, so an acquire by a job at that very moment is refused as held.
// Without EXECUTE on SYS.DBMS_LOCK either, the error is the views'
// *dialects.PrivilegeError.
func (a *LockAdmin) SessionLock(ctx context.Context, name string) (dialects.LockEntry, bool, error) {
	if err := dialects.CheckName(name); err != nil {
		return dialects.LockEntry{}, false, err
	}
	locks, err := readSessionLocks(ctx, a.DB, sessionLockSQL, LockName(name))
	switch {
	case err == nil && len(locks) == 0:
		return dialects.LockEntry{}, false, nil
	case err == nil:
		return sessionEntry(locks[0], name), true, nil
	case !errors.Is(err, dialects.ErrPrivilege):
		return dialects.LockEntry{}, false, dialects.Wrap(Name, "find session lock", err)
	}
	held, testErr := a.requestTest(ctx, name)
	switch {
	case errors.Is(testErr, dialects.ErrPrivilege):
		return dialects.LockEntry{}, false, dialects.Wrap(Name, "find session lock", err)
	case testErr != nil:
		return dialects.LockEntry{}, false, dialects.Wrap(Name, "find session lock", fmt.Errorf("%w (the lock views were refused too: %v)", testErr, err))
	}
	if !held {
		return dialects.LockEntry{}, false, nil
	}
	return dialects.LockEntry{Name: name, State: dialects.StateHeld, Strategy: dialects.StrategySession, Source: SourceRequestTest}, true, nil
}

// requestTest reports whether another session holds name, with the Holds
// block on a pooled connection: REQUEST answers 1 when another session
// holds the lock, and 0 when it was free (the block then releases it).
func (a *LockAdmin) requestTest(ctx context.Context, name string) (bool, error) {
	conn, err := a.DB.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	rc, err := session.Code(ctx, conn, "REQUEST", holdsSQL, name)
	if err != nil {
		return false, err
	}
	switch rc {
	case LockTimeout:
		return true, nil
	case LockSuccess:
		return false, nil
	}
	return false, &DBMSLockError{Call: "REQUEST", Code: rc}
}

// Kill ends the session with ALTER SYSTEM KILL SESSION and waits for its
// DBMS_LOCK locks to go (see SessionOps.kill).
func (a *LockAdmin) Kill(ctx context.Context, sessionID string) error {
	return a.ops().kill(ctx, a.DB, sessionID)
}

// listingError turns a refused read of the lock views into a
// *dialects.ListingUnavailableError with the GRANTs.
func (a *LockAdmin) listingError(err error) error {
	var priv *dialects.PrivilegeError
	if !errors.As(err, &priv) {
		return dialects.Wrap(Name, "list session locks", err)
	}
	return &dialects.ListingUnavailableError{
		Reason: "this user may not read GV$LOCK, GV$SESSION and SYS.DBMS_LOCK_ALLOCATED (" + oralike.OneLine(priv.Err) + ")",
		Enable: priv.Grant + " (or GRANT SELECT_CATALOG_ROLE)",
	}
}

// sessionEntry is the listing of one DBMS_LOCK lock; name, when not empty,
// is the schedlock name to show for it.
func sessionEntry(l SessionLock, name string) dialects.LockEntry {
	e := dialects.LockEntry{
		Name: name, State: dialects.StateWaiting, DBNow: l.DBNow,
		Strategy: dialects.StrategySession, Source: SourceLockViews,
		Holder: &dialects.Holder{SessionID: l.SessionID, User: l.User, Client: l.Machine, Application: l.Program},
	}
	switch {
	case e.Name != "":
	case strings.HasPrefix(l.LockName, LockNamePrefix):
		e.Name = l.Name
	default:
		e.Key = l.LockName
	}
	if !l.DBNow.IsZero() {
		e.Holder.Since = l.DBNow.Add(-l.SessionAge)
	}
	if l.Granted {
		e.State = dialects.StateHeld
		if !l.DBNow.IsZero() {
			e.LockedAt = l.DBNow.Add(-l.InMode)
		}
	}
	return e
}
