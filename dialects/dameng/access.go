package dameng

import (
	"context"
	"database/sql"
	"errors"
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

// lockAccess is what the probe learned about DBMS_LOCK. Detect stores it
// in Info.Facts, so it belongs to the one detected database.
type lockAccess struct {
	known   bool  // the probe gave a definite answer
	present bool  // SYS.DBMS_LOCK is installed and visible
	err     error // the probe's error when the answer is unknown
}

// probeDBMSLock runs probeDBMSLockSQL. Only a cancelled context is an
// error; a failed query leaves the answer unknown.
func probeDBMSLock(ctx context.Context, db *sql.DB) (lockAccess, error) {
	var n int64
	err := db.QueryRowContext(ctx, probeDBMSLockSQL).Scan(&n)
	switch {
	case err == nil:
		return lockAccess{known: true, present: n > 0}, nil
	case ctx.Err() != nil:
		return lockAccess{}, fmt.Errorf("probe DBMS_LOCK: %w", ctx.Err())
	default:
		return lockAccess{err: err}, nil
	}
}

// refusal is the ErrUnsupported error of a session locker without a proven
// DBMS_LOCK: what is missing and what installs it.
func (a lockAccess) refusal() error {
	if a.known {
		return dialects.WithRemedy(fmt.Errorf("%w: the DBMS_LOCK system package is not installed (or this user cannot see it); a DBA installs it with %s (and runs %s if EXECUTE is not granted to PUBLIC)",
			dialects.ErrUnsupported, installDBMSLock, grantDBMSLock), dialects.UseTableStrategy)
	}
	return dialects.WithRemedy(fmt.Errorf("%w: whether the DBMS_LOCK system package is installed could not be checked (%s), and session locks are used only where it is proven",
		dialects.ErrUnsupported, oralike.OneLine(a.err)), dialects.UseTableStrategy)
}

// accessOf returns the probe answer Detect recorded in info.Facts.
func accessOf(info dialects.Info) (lockAccess, bool) {
	a, ok := info.Facts.(*lockAccess)
	if !ok || a == nil {
		return lockAccess{}, false
	}
	return *a, true
}

// errNotDetected is the probe answer of a database whose Info did not come
// from Detect.
var errNotDetected = errors.New("the database was not detected (open it with dialects.Open, or use NewSessionLockerContext)")

// accessFor returns the probe answer Detect recorded in info, or an
// unknown answer saying the database was not detected.
func accessFor(info dialects.Info) lockAccess {
	if a, ok := accessOf(info); ok {
		return a
	}
	return lockAccess{err: errNotDetected}
}

// NewSessionLockerContext probes DBMS_LOCK on db within ctx, then returns
// what NewSessionLocker returns for a detected database: for a pool that
// did not go through Detect.
func NewSessionLockerContext(ctx context.Context, db *sql.DB) (dialects.Locker, error) {
	access, err := probeDBMSLock(ctx, db)
	if err != nil {
		return nil, err
	}
	return NewSessionLocker(db, dialects.Info{Dialect: Name, Product: Product, Facts: &access})
}
