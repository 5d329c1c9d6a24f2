package oracle

import "github.com/schedlock/schedlock/dialects/internal/dbmslock"

// DBMS_LOCK names (see package dbmslock): at most 128 bytes
// (SYS.DBMS_LOCK_ALLOCATED.NAME is VARCHAR2(128)), and names starting with
// "ORA$" are reserved for Oracle.
const (
	// LockNamePrefix starts every DBMS_LOCK name schedlock allocates: it
	// keeps clear of the reserved "ORA$" names and marks schedlock's locks
	// among other applications' in DBMS_LOCK_ALLOCATED and listings.
	LockNamePrefix = dbmslock.LockNamePrefix
	// MaxLockNameBytes is DBMS_LOCK's limit on a lock name.
	MaxLockNameBytes = dbmslock.MaxLockNameBytes
)

// LockName is the DBMS_LOCK name of the lock called name: LockNamePrefix
// followed by name when the whole fits in 128 bytes, else shortened with
// a hash (dbmslock.LockName). The mapping is deterministic, and
// SessionLockName reverses it for names that were not shortened.
//
// Names are compared byte for byte in the database character set; on a
// database whose character set is not AL32UTF8 (or UTF8) names outside that
// set are converted lossily and may collide.
func LockName(name string) string { return dbmslock.LockName(name) }

// SessionLockName returns the schedlock name inside a DBMS_LOCK name and
// true, or "" and false for a lock another application allocated
// (dbmslock.SessionLockName).
func SessionLockName(lockName string) (string, bool) { return dbmslock.SessionLockName(lockName) }
