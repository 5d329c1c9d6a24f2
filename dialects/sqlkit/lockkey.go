package sqlkit

import (
	"context"

	"github.com/schedlock/schedlock/dialects"
)

// SessionKeyFinder is implemented by LockAdmins that can find a session
// lock by its raw key, for locks known only by the key `locks ls` shows
// (another tool's advisory lock, a key whose name is unknown).
type SessionKeyFinder interface {
	// SessionLockByKey returns the session holding the lock whose
	// LockEntry.Key is key: on PostgreSQL a bigint advisory key in decimal
	// or "k1,k2" for a pair of int4 keys; on MySQL the GET_LOCK name as the
	// server stores it. found is false when it is free. A key of the wrong
	// form gives ErrInvalid.
	SessionLockByKey(ctx context.Context, key string) (entry dialects.LockEntry, found bool, err error)
}

// KnownLockFinder is implemented by LockAdmins that, where the server
// cannot list its session locks, can still look up the locks of known
// names one by one: migration tools' GET_LOCK names on MySQL.
type KnownLockFinder interface {
	// KnownSessionLocks returns the held locks among the known names.
	KnownSessionLocks(ctx context.Context) ([]dialects.LockEntry, error)
}

// knownSessionLocks is admin's KnownSessionLocks, or none when it has no
// known names.
func knownSessionLocks(ctx context.Context, admin dialects.LockAdmin) ([]dialects.LockEntry, error) {
	finder, ok := admin.(KnownLockFinder)
	if !ok {
		return nil, nil
	}
	return finder.KnownSessionLocks(ctx)
}

// RawNameFinder is implemented by LockAdmins of servers that lock names
// (MySQL's GET_LOCK) whose SessionLock looks a name up under another
// stored name (schedlock's scoped "DATABASE/NAME"): RawSessionLock finds
// the lock stored as name itself, which GET_LOCK('NAME') of any client
// takes. found is false when that lock is free, and when SessionLock
// looks name up as it is already (raw session names).
type RawNameFinder interface {
	RawSessionLock(ctx context.Context, name string) (entry dialects.LockEntry, found bool, err error)
}

// rawSessionLock is admin's RawSessionLock, or not found when it has none.
func rawSessionLock(ctx context.Context, admin dialects.LockAdmin, name string) (dialects.LockEntry, bool, error) {
	finder, ok := admin.(RawNameFinder)
	if !ok {
		return dialects.LockEntry{}, false, nil
	}
	return finder.RawSessionLock(ctx, name)
}
