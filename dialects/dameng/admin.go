package dameng

import (
	"context"
	"database/sql"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/oralike"
)

// lockSource is LockEntry.Source for session locks.
const lockSource = "V$LOCK"

// LockAdmin implements dialects.LockAdmin for DM8.
type LockAdmin struct {
	db  *sql.DB
	ops *SessionOps
}

var _ dialects.LockAdmin = (*LockAdmin)(nil)

// LockTables returns the KnownTables that exist in the current schema, by
// reading each one's columns (SELECT * … WHERE 1 = 0, which reads no row);
// a table that does not exist (-2106) is left out.
func (a *LockAdmin) LockTables(ctx context.Context) ([]dialects.Table, error) {
	out := []dialects.Table{}
	for _, t := range dialects.KnownTables() {
		rows, err := a.db.QueryContext(ctx, "SELECT * FROM "+t.Name+" WHERE 1 = 0")
		if IsMissingTable(err) {
			continue
		}
		if err != nil {
			return nil, dialects.Wrap(Name, "find lock tables", err)
		}
		_ = rows.Close()
		out = append(out, t)
	}
	return out, nil
}

// SessionLocks lists the DBMS_LOCK locks the server shows. A lock whose
// DBMS_LOCK name is LockName of one of names is listed under that name;
// other schedlock locks under the name inside their DBMS_LOCK name, and
// other applications' locks under their DBMS_LOCK name. Views that cannot
// be read give a *dialects.ListingUnavailableError.
func (a *LockAdmin) SessionLocks(ctx context.Context, names []string) ([]dialects.LockEntry, error) {
	locks, err := ListSessionLocks(ctx, a.db)
	if err != nil {
		return nil, listingError(err)
	}
	labels := map[string]string{}
	for _, n := range names {
		if n != "" {
			labels[LockName(n)] = n
		}
	}
	out := make([]dialects.LockEntry, 0, len(locks))
	for _, l := range locks {
		name := l.LockName
		switch full, ok := labels[l.LockName]; {
		case ok:
			name = full
		case l.Name != "":
			name = l.Name
		}
		out = append(out, sessionEntry(name, l))
	}
	return out, nil
}

// SessionLock returns the session holding the lock called name.
func (a *LockAdmin) SessionLock(ctx context.Context, name string) (dialects.LockEntry, bool, error) {
	if err := dialects.CheckName(name); err != nil {
		return dialects.LockEntry{}, false, err
	}
	locks, err := ListSessionLocks(ctx, a.db)
	if err != nil {
		return dialects.LockEntry{}, false, listingError(err)
	}
	want := LockName(name)
	for _, l := range locks {
		if l.LockName == want && l.Granted {
			return sessionEntry(name, l), true, nil
		}
	}
	return dialects.LockEntry{}, false, nil
}

// Kill closes the session with SP_CLOSE_SESSION (see SessionOps.kill).
func (a *LockAdmin) Kill(ctx context.Context, sessionID string) error {
	return a.ops.kill(ctx, a.db, sessionID)
}

// listingError turns views that do not exist or cannot be read into a
// *dialects.ListingUnavailableError; other errors pass unchanged.
func listingError(err error) error {
	if !IsMissingTable(err) && !mentionsPrivilege(err) {
		return err
	}
	return &dialects.ListingUnavailableError{
		Reason: "V$LOCK, V$SESSIONS or SYS.DBMS_LOCK_ALLOCATED cannot be read (" + oralike.OneLine(err) + ")",
		Enable: "GRANT SELECT ON V$LOCK TO <user>; GRANT SELECT ON V$SESSIONS TO <user>; GRANT SELECT ON SYS.DBMS_LOCK_ALLOCATED TO <user> (DBMS_LOCK_ALLOCATED exists once " + installDBMSLock + " has run)",
	}
}

// sessionEntry is the listing of one DBMS_LOCK lock.
func sessionEntry(name string, l SessionLock) dialects.LockEntry {
	state := dialects.StateWaiting
	if l.Granted {
		state = dialects.StateHeld
	}
	e := dialects.LockEntry{
		Name: name, State: state, DBNow: l.DBNow,
		Strategy: dialects.StrategySession, Source: lockSource,
	}
	if l.SessionID != "" {
		h := &dialects.Holder{SessionID: l.SessionID, User: l.User, Client: l.Client, Application: l.Application}
		if !l.DBNow.IsZero() {
			h.Since = l.DBNow.Add(-l.SessionAge)
		}
		e.Holder = h
	}
	return e
}
