package dameng

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/oralike"
)

// probeDBMSLockSQL asks the catalog whether the DBMS_LOCK system package is
// installed. DM creates most system packages when a database is first
// started, but DBMS_LOCK only on request (SP_CREATE_SYSTEM_PACKAGES), and
// ALL_OBJECTS lists it only to users who may see it. The package's owner,
// SYS, is the schema the session statements name it with [U].
const probeDBMSLockSQL = "SELECT COUNT(*) FROM ALL_OBJECTS WHERE OWNER = 'SYS' AND OBJECT_NAME = 'DBMS_LOCK' AND OBJECT_TYPE = 'PACKAGE'"

// installDBMSLock is the call a DBA runs to install DBMS_LOCK.
const installDBMSLock = "CALL SP_CREATE_SYSTEM_PACKAGES(1, 'DBMS_LOCK')"

// grantDBMSLock lets a user run it, where EXECUTE is not granted to PUBLIC.
const grantDBMSLock = "GRANT EXECUTE ON SYS.DBMS_LOCK TO <user>"

// lockAccess is what the probe learned about DBMS_LOCK (Usable: SYS.DBMS_LOCK
// is installed and visible). The Backend keeps it, so it belongs to the
// one detected database.
type lockAccess = oralike.LockAccess

// probeDBMSLock runs probeDBMSLockSQL. Only a cancelled context is an
// error; a failed query leaves the answer unknown.
func probeDBMSLock(ctx context.Context, db *sql.DB) (lockAccess, error) {
	return oralike.ProbeLockAccess(ctx, "", func(ctx context.Context) (bool, error) {
		var n int64
		err := db.QueryRowContext(ctx, probeDBMSLockSQL).Scan(&n)
		return n > 0, err
	}, nil)
}

// refusal is the ErrUnsupported error of a session locker without a proven
// DBMS_LOCK: what is missing and what installs it.
func refusal(a lockAccess) error {
	if a.Known {
		return dialects.WithRemedy(fmt.Errorf("%w: the DBMS_LOCK system package is not installed (or this user cannot see it); a DBA installs it with %s (and runs %s if EXECUTE is not granted to PUBLIC)",
			dialects.ErrUnsupported, installDBMSLock, grantDBMSLock), dialects.UseTableStrategy)
	}
	return dialects.WithRemedy(fmt.Errorf("%w: whether the DBMS_LOCK system package is installed could not be checked (%s), and session locks are used only where it is proven",
		dialects.ErrUnsupported, oralike.OneLine(a.Err)), dialects.UseTableStrategy)
}

// recommend picks the lease table unless the probe proved that DBMS_LOCK
// is installed. Even then the table stays the recommendation when DM's
// DBMS_LOCK semantics have not been proven on this server: the session
// strategy is recommended only with the package present, and DB.Probe
// still downgrades it to the table when the two-connection probe fails.
func recommend(access lockAccess) (dialects.Strategy, string) {
	return access.Recommend(
		"the DBMS_LOCK system package is installed: a server lock on a dedicated connection, freed as soon as its session ends, so a crashed node leaves no zombie lock",
		"the DBMS_LOCK system package is not installed, so there are no session locks; the lease table needs nothing but a table ("+
			installDBMSLock+" enables the session strategy)",
		"detection did not prove that DBMS_LOCK is installed; the lease table needs nothing but a table")
}

// NewSessionLockerContext probes DBMS_LOCK on db within ctx, then returns
// what Backend.NewSessionLocker returns: the DBMS_LOCK locker, or the
// refusal naming the call that installs the package. It is for a pool
// that New did not open.
func NewSessionLockerContext(ctx context.Context, db *sql.DB) (dialects.Locker, error) {
	access, err := probeDBMSLock(ctx, db)
	if err != nil {
		return nil, err
	}
	return newSessionLocker(db, access)
}
