package dameng

import "github.com/schedlock/schedlock/dialects/internal/dbmslock"

// DBMS_LOCK names (see package dbmslock): at most 128 bytes, as Oracle's
// DBMS_LOCK_ALLOCATED.NAME (VARCHAR2(128)), which DM's package imitates
// [U: DM's own limit is unverified; 128 bytes fits whatever its length
// semantics].
const (
	// LockNamePrefix starts every DBMS_LOCK name schedlock allocates: it
	// marks schedlock's locks among other applications' in
	// SYS.DBMS_LOCK_ALLOCATED and listings, and keeps clear of the
	// "ORA$" names Oracle reserves.
	LockNamePrefix = dbmslock.LockNamePrefix
	// MaxLockNameBytes is the limit on a whole DBMS_LOCK name.
	MaxLockNameBytes = dbmslock.MaxLockNameBytes
)

// LockName is the DBMS_LOCK name of the lock called name: LockNamePrefix
// followed by name when the whole fits in 128 bytes, else shortened with
// a hash (dbmslock.LockName). The mapping is deterministic, and
// SessionLockName reverses it for names that were not shortened.
func LockName(name string) string { return dbmslock.LockName(name) }

// SessionLockName returns the schedlock name inside a DBMS_LOCK name and
// true, or "" and false for a lock another application allocated
// (dbmslock.SessionLockName).
func SessionLockName(lockName string) (string, bool) { return dbmslock.SessionLockName(lockName) }
