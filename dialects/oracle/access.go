package oracle

import (
	"context"
	"database/sql"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/oralike"
)

// lockAccess is what New's probe learned about the user's right to execute
// SYS.DBMS_LOCK (Usable: EXECUTE is granted). The Backend keeps it, so it
// belongs to the one detected database.
type lockAccess = oralike.LockAccess

// probeDBMSLock compiles a reference to SYS.DBMS_LOCK. A PLS-00201 means
// the grant is missing; another error leaves the answer unknown (the
// session locker then reports whatever its first statement meets).
func probeDBMSLock(ctx context.Context, db *sql.DB, user string) (lockAccess, error) {
	return oralike.ProbeLockAccess(ctx, user, func(ctx context.Context) (bool, error) {
		var mode int64
		_, err := db.ExecContext(ctx, probeDBMSLockSQL, sql.Out{Dest: &mode})
		return err == nil, err
	}, missingDBMSLock)
}

// recommend picks the session strategy (DBMS_LOCK) when the probe proved
// that the user may execute SYS.DBMS_LOCK, and the lease table otherwise,
// saying which grant would enable session locks.
func recommend(access lockAccess) (dialects.Strategy, string) {
	return access.Recommend(
		"DBMS_LOCK (EXECUTE on SYS.DBMS_LOCK is granted): a server lock on a dedicated connection, freed as soon as its session ends, so a crashed node leaves no zombie lock",
		"this user lacks EXECUTE on SYS.DBMS_LOCK, so there are no session locks; the lease table needs no extra privilege ("+
			grantExecute(access.User)+" enables the session strategy)",
		"EXECUTE on SYS.DBMS_LOCK was not proven by detection; the lease table needs no extra privilege")
}
