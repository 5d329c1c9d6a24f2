package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"

	"github.com/schedlock/schedlock/dialects"
)

// NewSessionLocker returns the session-strategy locker: advisory locks on
// Key(name), each on its own pinned connection (see dialects.SessionLocker).
// It refuses, with an error matching dialects.ErrUnsupported, on CockroachDB
// (its advisory lock functions are stubs that lock nothing) and on
// YugabyteDB before 2025.1 (advisory locks refused or unreliable).
func NewSessionLocker(db *sql.DB, info dialects.Info) (dialects.Locker, error) {
	if err := sessionSupported(info); err != nil {
		return nil, dialects.Wrap(Name, "session locker", err)
	}
	return &dialects.SessionLocker{Dialect: Name, DB: db, Ops: SessionOps{}}, nil
}

func sessionSupported(info dialects.Info) error {
	switch {
	case info.Product == dialects.ProductCockroachDB:
		return fmt.Errorf("%w: CockroachDB's pg_try_advisory_lock is a stub that always returns true, so two holders would both get the lock; use --strategy table", dialects.ErrUnsupported)
	case info.Product == dialects.ProductYugabyteDB && !versionAtLeast(info.Version, yugabyteAdvisoryGA...):
		return fmt.Errorf("%w: YugabyteDB %s has no reliable advisory locks (generally available from 2025.1); use --strategy table", dialects.ErrUnsupported, info.Version)
	}
	return nil
}

// SessionOps implements dialects.SessionOps, dialects.HolderFinder and
// dialects.SessionKiller with session-level advisory locks on the bigint
// key Key(name). Session ids are backend pids in decimal.
//
// Advisory locks stack within a session (two locks need two unlocks) and
// survive COMMIT and ROLLBACK; dialects.SessionLocker takes each lock on a
// fresh connection and releases it once, so no lock stacks.
type SessionOps struct{}

var (
	_ dialects.SessionOps    = SessionOps{}
	_ dialects.SessionKiller = SessionOps{}
)

// TryLock runs SELECT pg_try_advisory_lock(key) on conn.
func (SessionOps) TryLock(ctx context.Context, conn *sql.Conn, name string) (bool, error) {
	var ok bool
	if err := conn.QueryRowContext(ctx, "SELECT pg_try_advisory_lock($1::bigint)", Key(name)).Scan(&ok); err != nil {
		return false, fmt.Errorf("pg_try_advisory_lock: %w", err)
	}
	return ok, nil
}

// Unlock runs SELECT pg_advisory_unlock(key) on conn; the server answers
// false (and frees nothing) when conn's session does not hold the key.
func (SessionOps) Unlock(ctx context.Context, conn *sql.Conn, name string) (bool, error) {
	var ok bool
	if err := conn.QueryRowContext(ctx, "SELECT pg_advisory_unlock($1::bigint)", Key(name)).Scan(&ok); err != nil {
		return false, fmt.Errorf("pg_advisory_unlock: %w", err)
	}
	return ok, nil
}

// holdsSQL finds conn's own granted lock on a bigint key in pg_locks:
// objsubid 1 marks a bigint key, classid its high and objid its low 32 bits.
// Both are unsigned oids, so they are compared as bigint.
const holdsSQL = `SELECT EXISTS (SELECT 1 FROM pg_locks
WHERE locktype = 'advisory' AND objsubid = 1 AND classid::bigint = $1::bigint AND objid::bigint = $2::bigint
AND pid = pg_backend_pid() AND granted)`

// Holds reports whether conn's session holds a granted advisory lock on
// Key(name), reading pg_locks.
func (SessionOps) Holds(ctx context.Context, conn *sql.Conn, name string) (bool, error) {
	classid, objid := KeyParts(Key(name))
	var held bool
	if err := conn.QueryRowContext(ctx, holdsSQL, int64(classid), int64(objid)).Scan(&held); err != nil {
		return false, fmt.Errorf("read pg_locks: %w", err)
	}
	return held, nil
}

// holderSQL finds the backend holding a bigint advisory key in the current
// database (advisory lock tags include the database).
const holderSQL = `SELECT pid FROM pg_locks
WHERE locktype = 'advisory' AND objsubid = 1 AND classid::bigint = $1::bigint AND objid::bigint = $2::bigint
AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
ORDER BY pid LIMIT 1`

// Holder returns the pid, in decimal, of the backend holding the lock on
// name in the current database, or "" when nobody holds it.
func (SessionOps) Holder(ctx context.Context, db *sql.DB, name string) (string, error) {
	classid, objid := KeyParts(Key(name))
	var pid int64
	err := db.QueryRowContext(ctx, holderSQL, int64(classid), int64(objid)).Scan(&pid)
	switch {
	case err == sql.ErrNoRows:
		return "", nil
	case err != nil:
		return "", dialects.Wrap(Name, "holder", fmt.Errorf("read pg_locks: %w", err))
	}
	return strconv.FormatInt(pid, 10), nil
}
