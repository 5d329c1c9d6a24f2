package dbmslock

import (
	"strings"

	"github.com/schedlock/schedlock/dialects"
)

// DBMS_LOCK names: at most 128 bytes (Oracle's
// SYS.DBMS_LOCK_ALLOCATED.NAME is VARCHAR2(128), which Dameng's package
// imitates), and names starting with "ORA$" are reserved for Oracle.
const (
	// LockNamePrefix starts every DBMS_LOCK name schedlock allocates: it
	// keeps clear of the reserved "ORA$" names and marks schedlock's locks
	// among other applications' in DBMS_LOCK_ALLOCATED and listings.
	LockNamePrefix = "SCHEDLOCK$"
	// MaxLockNameBytes is the limit on a whole DBMS_LOCK name.
	MaxLockNameBytes = 128
)

// LockName is the DBMS_LOCK name of the lock called name: LockNamePrefix
// followed by name when the whole fits in MaxLockNameBytes; else the prefix
// and dialects.MapName(name, n) for the largest n whose result fits (a
// readable prefix of the name, "#", and 16 hex digits of its SHA-256). The
// mapping is deterministic, so every process maps a name to the same lock,
// and SessionLockName reverses it for names that were not shortened.
func LockName(name string) string {
	room := MaxLockNameBytes - len(LockNamePrefix)
	for n := room; ; n-- {
		mapped := dialects.MapName(name, n)
		if len(mapped) <= room || n == 17 {
			return LockNamePrefix + mapped
		}
	}
}

// SessionLockName returns the schedlock name inside a DBMS_LOCK name and
// true, or "" and false for a lock another application allocated. A name
// shortened by LockName comes back shortened (with its "#" and hash).
func SessionLockName(lockName string) (string, bool) {
	if !strings.HasPrefix(lockName, LockNamePrefix) {
		return "", false
	}
	return strings.TrimPrefix(lockName, LockNamePrefix), true
}
