package sqlserver

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/schedlock/schedlock/dialects"
)

// lockSource is LockEntry.Source for session locks.
const lockSource = "sys.dm_tran_locks"

// LockAdmin implements dialects.LockAdmin for SQL Server
// (Backend.NewLockAdmin).
type LockAdmin struct {
	db   *sql.DB
	info dialects.Info
	ops  *SessionOps
}

var _ dialects.LockAdmin = (*LockAdmin)(nil)

// lockTablesSQL finds the known lock tables where an unqualified name
// resolves: the caller's default schema, then dbo.
const lockTablesSQL = `SELECT t.name, CASE WHEN t.schema_id = SCHEMA_ID() THEN 0 ELSE 1 END
FROM sys.tables AS t
WHERE t.schema_id IN (SCHEMA_ID(), SCHEMA_ID(N'dbo')) AND t.name IN (N'schedlock', N'shedlock', N'sys_sched_lock', N'DATABASECHANGELOGLOCK')
ORDER BY 2, t.name`

// LockTables returns the KnownTables that exist in the caller's default
// schema or dbo, named as the database spells them.
func (a *LockAdmin) LockTables(ctx context.Context) ([]dialects.Table, error) {
	rows, err := a.db.QueryContext(ctx, lockTablesSQL)
	if err != nil {
		return nil, dialects.Wrap(Name, "find lock tables", err)
	}
	defer rows.Close()
	seen := map[string]bool{}
	out := []dialects.Table{}
	for rows.Next() {
		var name string
		var order int64
		if err := rows.Scan(&name, &order); err != nil {
			return nil, dialects.Wrap(Name, "find lock tables", err)
		}
		for _, k := range dialects.KnownTables() {
			if strings.EqualFold(k.Name, name) && !seen[k.Preset] {
				seen[k.Preset] = true
				out = append(out, dialects.Table{Preset: k.Preset, Name: name})
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, dialects.Wrap(Name, "find lock tables", err)
	}
	return out, nil
}

// SessionLocks lists the application locks of the current database. A lock
// whose resource is LockName of one of names is listed under that name,
// others under their resource. Without VIEW SERVER STATE (VIEW DATABASE
// STATE) the error is a *dialects.ListingUnavailableError with the GRANT.
func (a *LockAdmin) SessionLocks(ctx context.Context, names []string) ([]dialects.LockEntry, error) {
	locks, err := ListSessionLocks(ctx, a.db)
	if err != nil {
		return nil, a.listingError(ctx, err)
	}
	labels := map[string]string{}
	for _, n := range names {
		if n != "" {
			labels[LockName(n)] = n
		}
	}
	out := make([]dialects.LockEntry, 0, len(locks))
	for _, l := range locks {
		name := l.Resource
		if full, ok := labels[l.Resource]; ok {
			name = full
		}
		out = append(out, sessionEntry(name, l))
	}
	return out, nil
}

// SessionLock returns the session holding the lock called name. Where
// sys.dm_tran_locks cannot be read it still says whether the lock is held,
// with APPLOCK_TEST, but names no holder.
func (a *LockAdmin) SessionLock(ctx context.Context, name string) (dialects.LockEntry, bool, error) {
	if err := dialects.CheckName(name); err != nil {
		return dialects.LockEntry{}, false, err
	}
	resource := LockName(name)
	locks, err := ListSessionLocks(ctx, a.db)
	if err == nil {
		if l, ok := holderOf(locks, resource); ok {
			return sessionEntry(name, l), true, nil
		}
		return dialects.LockEntry{}, false, nil
	}
	if !hasNumber(err, errViewStateDenied, errPermissionDenied) {
		return dialects.LockEntry{}, false, dialects.Wrap(Name, "find session lock", err)
	}
	var free sql.NullInt64
	if err := a.db.QueryRowContext(ctx, lockTestSQL, resource).Scan(&free); err != nil {
		return dialects.LockEntry{}, false, dialects.Wrap(Name, "find session lock", fmt.Errorf("APPLOCK_TEST: %w", err))
	}
	if free.Valid && free.Int64 == 1 {
		return dialects.LockEntry{}, false, nil
	}
	return dialects.LockEntry{Name: name, State: dialects.StateHeld, Strategy: dialects.StrategySession, Source: "APPLOCK_TEST"}, true, nil
}

// Kill terminates the session with KILL (see SessionOps.kill).
func (a *LockAdmin) Kill(ctx context.Context, sessionID string) error {
	return a.ops.kill(ctx, a.db, sessionID)
}

// listingError turns a refused read of the lock views into a
// *dialects.ListingUnavailableError.
func (a *LockAdmin) listingError(ctx context.Context, err error) error {
	if !hasNumber(err, errViewStateDenied, errPermissionDenied) {
		return dialects.Wrap(Name, "list session locks", err)
	}
	grant := viewStateGrant(ctx, a.db, a.info)
	return &dialects.ListingUnavailableError{
		Reason: "sys.dm_tran_locks shows other sessions' locks only with " + grant.Privilege + " (" + oneLine(err) + ")",
		Enable: grant.Grant,
	}
}

// sessionEntry is the listing of one application lock.
func sessionEntry(name string, l SessionLock) dialects.LockEntry {
	state := dialects.StateWaiting
	if l.Granted() {
		state = dialects.StateHeld
	}
	e := dialects.LockEntry{
		Name: name, State: state, DBNow: l.DBNow,
		Strategy: dialects.StrategySession, Source: lockSource,
	}
	if l.SessionID != "" {
		e.Holder = &dialects.Holder{SessionID: l.SessionID, User: l.Login, Client: l.Client, Application: l.Program, Since: l.LoginTime}
	}
	return e
}

// oneLine is err's message on one line.
func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
