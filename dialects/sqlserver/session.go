package sqlserver

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// The session-lock statements. Each is one batch, one round trip, and binds
// the resource (LockName of the lock name) as @p1. Every lock is Exclusive,
// owned by the Session (so it outlives transactions and ends with the
// connection), scoped to the principal public, which every user belongs to.
const (
	// tryLockSQL tries once without waiting (@LockTimeout = 0) and returns
	// sp_getapplock's return code as a result row.
	tryLockSQL = `DECLARE @rc int;
EXEC @rc = sp_getapplock @Resource = @p1, @LockMode = 'Exclusive', @LockOwner = 'Session', @LockTimeout = 0, @DbPrincipal = 'public';
SELECT @rc;`

	// unlockSQL releases the lock only when this session holds it, so a
	// release from another session raises no error 1223 and frees nothing:
	// it returns sp_releaseapplock's code (0) or -999 when nothing was held.
	unlockSQL = `DECLARE @rc int = -999;
IF APPLOCK_MODE('public', @p1, 'Session') <> 'NoLock'
  EXEC @rc = sp_releaseapplock @Resource = @p1, @LockOwner = 'Session', @DbPrincipal = 'public';
SELECT @rc;`

	// holdsSQL is the mode this session holds the lock in: 'NoLock' when
	// it holds none (another session's lock does not count).
	holdsSQL = `SELECT APPLOCK_MODE('public', @p1, 'Session')`

	// lockTestSQL is 1 when the lock could be granted now, 0 when another
	// session holds it; run on a connection that holds no locks.
	lockTestSQL = `SELECT APPLOCK_TEST('public', @p1, 'Exclusive', 'Session')`
)

// sp_releaseapplock's answer when the lock was not held (unlockSQL's
// initial value).
const notHeldCode = -999

// synapseRefusal is why Azure Synapse has neither lock strategy.
const synapseRefusal = "Azure Synapse Analytics has no sp_getapplock and no OUTPUT clause, so neither lock strategy works there; keep the locks in an Azure SQL Database or SQL Server"

// SessionOps runs sp_getapplock and its companions on one connection. It
// implements sqlkit.SessionOps. Names pass through LockName.
type SessionOps struct {
	// Info selects the privileges named in errors (Azure SQL Database
	// grants database permissions, SQL Server server permissions).
	Info dialects.Info

	// granted interprets sp_getapplock's return code; nil means
	// getAppLockGranted. Tests replace it to prove the suite notices a
	// wrong interpretation.
	granted func(code int, resource string) (bool, error)
}

var (
	_ sqlkit.SessionOps = (*SessionOps)(nil)
)

// TryLock runs sp_getapplock with @LockTimeout = 0 and maps its return
// code: 0 (granted) and 1 (granted after waiting for incompatible locks to
// be released) are success, -1 (timed out) means another session holds the
// lock, and -2 (canceled), -3 (deadlock victim) and -999 (parameter or call
// error) are an *AppLockError.
func (o *SessionOps) TryLock(ctx context.Context, conn *sql.Conn, name string) (bool, error) {
	resource := LockName(name)
	return o.scanGetAppLock(conn.QueryRowContext(ctx, tryLockSQL, resource), resource)
}

// scanGetAppLock reads the return code of a tryLockSQL or lockSQL batch
// and maps it (granted, or nil getAppLockGranted).
func (o *SessionOps) scanGetAppLock(row *sql.Row, resource string) (bool, error) {
	var code sql.NullInt64
	if err := row.Scan(&code); err != nil {
		if hasNumber(err, errLockTimeout) {
			// sp_getapplock reports a timeout as -1, not as error 1222;
			// should a server raise it anyway, it still means "taken".
			return false, nil
		}
		if hasNumber(err, errDeadlockVictim) {
			return false, fmt.Errorf("sp_getapplock: %w: %v", ErrDeadlockVictim, err)
		}
		return false, fmt.Errorf("sp_getapplock: %w", err)
	}
	if !code.Valid {
		return false, fmt.Errorf("sp_getapplock returned no code for resource %q", resource)
	}
	interpret := o.granted
	if interpret == nil {
		interpret = getAppLockGranted
	}
	return interpret(int(code.Int64), resource)
}

// getAppLockGranted maps sp_getapplock's return code: >= 0 granted (0 at
// once, 1 after waiting), -1 timed out, anything else an *AppLockError.
func getAppLockGranted(code int, resource string) (bool, error) {
	switch {
	case code >= 0:
		return true, nil
	case code == -1:
		return false, nil
	default:
		return false, &AppLockError{Proc: "sp_getapplock", Code: code, Resource: resource}
	}
}

// Unlock releases the lock if this session holds it: true when
// sp_releaseapplock returned 0, false when the session held nothing (the
// lock of another session is left alone); another code is an
// *AppLockError.
func (o *SessionOps) Unlock(ctx context.Context, conn *sql.Conn, name string) (bool, error) {
	resource := LockName(name)
	return scanRelease(conn.QueryRowContext(ctx, unlockSQL, resource), resource)
}

// scanRelease reads and maps the return code of unlockSQL.
func scanRelease(row *sql.Row, resource string) (bool, error) {
	var code sql.NullInt64
	if err := row.Scan(&code); err != nil {
		return false, fmt.Errorf("sp_releaseapplock: %w", err)
	}
	return releaseDone(int(code.Int64), code.Valid, resource)
}

// releaseDone maps the return code of unlockSQL.
func releaseDone(code int, valid bool, resource string) (bool, error) {
	switch {
	case !valid:
		return false, fmt.Errorf("sp_releaseapplock returned no code for resource %q", resource)
	case code >= 0:
		return true, nil
	case code == notHeldCode:
		return false, nil
	default:
		return false, &AppLockError{Proc: "sp_releaseapplock", Code: code, Resource: resource}
	}
}

// Holds reports whether conn's session holds the lock: APPLOCK_MODE is not
// 'NoLock'.
func (o *SessionOps) Holds(ctx context.Context, conn *sql.Conn, name string) (bool, error) {
	return scanHolds(conn.QueryRowContext(ctx, holdsSQL, LockName(name)))
}

// scanHolds reads and maps the answer of holdsSQL.
func scanHolds(row *sql.Row) (bool, error) {
	var mode sql.NullString
	if err := row.Scan(&mode); err != nil {
		return false, fmt.Errorf("APPLOCK_MODE: %w", err)
	}
	return mode.Valid && mode.String != "NoLock", nil
}

// holderOf returns the granted session-owned lock on resource under the
// principal public.
func holderOf(locks []SessionLock, resource string) (SessionLock, bool) {
	for _, l := range locks {
		if l.Resource == resource && l.PrincipalID == publicPrincipalID && l.Granted() && l.OwnerType == "SESSION" {
			return l, true
		}
	}
	return SessionLock{}, false
}
