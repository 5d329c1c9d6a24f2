package dameng

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"sync"
	"time"
	"weak"

	"github.com/schedlock/schedlock/dialects"
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

// probeTimeout bounds the probe NewSessionLocker runs when Detect did not.
const probeTimeout = 10 * time.Second

// lockAccess is what the probe learned about DBMS_LOCK.
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
		return fmt.Errorf("%w: the DBMS_LOCK system package is not installed (or this user cannot see it); a DBA installs it with %s (and runs %s if EXECUTE is not granted to PUBLIC); use --strategy table",
			dialects.ErrUnsupported, installDBMSLock, grantDBMSLock)
	}
	return fmt.Errorf("%w: whether the DBMS_LOCK system package is installed could not be checked (%s), and session locks are used only where it is proven; use --strategy table",
		dialects.ErrUnsupported, oneLine(a.err))
}

// The probe answers, by database (for NewSessionLocker) and by Info (for
// Recommend, which sees nothing else). Entries for a *sql.DB go away when
// it is garbage collected.
var (
	accessByDB   sync.Map // weak.Pointer[sql.DB] → lockAccess
	accessByInfo sync.Map // dialects.Info → lockAccess
)

// rememberAccess records the probe answer of db, whose Info is info.
func rememberAccess(db *sql.DB, info dialects.Info, access lockAccess) {
	key := weak.Make(db)
	if _, loaded := accessByDB.Swap(key, access); !loaded {
		runtime.AddCleanup(db, func(k weak.Pointer[sql.DB]) { accessByDB.Delete(k) }, key)
	}
	accessByInfo.Store(info, access)
}

// accessFor returns the probe answer for db: the one Detect recorded, or a
// fresh probe (bounded by probeTimeout) when db was never detected.
func accessFor(db *sql.DB) lockAccess {
	if v, ok := accessByDB.Load(weak.Make(db)); ok {
		return v.(lockAccess)
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	access, err := probeDBMSLock(ctx, db)
	if err != nil {
		return lockAccess{err: err}
	}
	if access.known {
		key := weak.Make(db)
		if _, loaded := accessByDB.LoadOrStore(key, access); !loaded {
			runtime.AddCleanup(db, func(k weak.Pointer[sql.DB]) { accessByDB.Delete(k) }, key)
		}
	}
	return access
}

// accessForInfo returns the probe answer of the last Detect that produced
// info.
func accessForInfo(info dialects.Info) (lockAccess, bool) {
	v, ok := accessByInfo.Load(info)
	if !ok {
		return lockAccess{}, false
	}
	return v.(lockAccess), true
}
