package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// NewSessionLocker returns the session-strategy locker: advisory locks on
// Key(name), each on its own pinned connection (see sqlkit.SessionLocker).
// It refuses, with an error matching dialects.ErrUnsupported, on CockroachDB
// (its advisory lock functions are stubs that lock nothing), on YugabyteDB
// before 2025.1 (advisory locks refused or unreliable), and on KingbaseES
// and openGauss when Detect found the lock functions missing or saw them
// fail the two-connection probe. On KingbaseES the locker uses the catalog
// names Detect found (pg_ or sys_).
func NewSessionLocker(db *sql.DB, info dialects.Info) (dialects.Locker, error) {
	if err := sessionSupported(info); err != nil {
		return nil, dialects.Wrap(Name, "session locker", err)
	}
	ops := SessionOps{Names: info.SessionNames}
	if provenOnly(info) {
		facts, known := factsOf(info)
		if err := unprovenRefusal(facts, known, info); err != nil {
			return nil, dialects.Wrap(Name, "session locker", err)
		}
		if known && facts.catalog != PostgresCatalog {
			ops.Catalog = &facts.catalog
		}
	}
	return &sqlkit.SessionLocker{Dialect: Name, DB: db, Ops: ops}, nil
}

// sessionSupported refuses the products whose advisory locks are known not
// to exclude, judged from info alone; NewSessionLocker adds what Detect
// proved.
func sessionSupported(info dialects.Info) error {
	switch {
	case info.Product == dialects.ProductCockroachDB:
		return dialects.WithRemedy(fmt.Errorf("%w: CockroachDB's pg_try_advisory_lock is a stub that always returns true, so two holders would both get the lock", dialects.ErrUnsupported), dialects.UseTableStrategy)
	case info.Product == dialects.ProductYugabyteDB && !versionAtLeast(info.Version, yugabyteAdvisoryGA...):
		return dialects.WithRemedy(fmt.Errorf("%w: YugabyteDB %s has no reliable advisory locks (generally available from 2025.1)", dialects.ErrUnsupported, info.Version), dialects.UseTableStrategy)
	}
	return nil
}

// SessionOps implements sqlkit.SessionOps, sqlkit.HolderFinder and
// sqlkit.SessionKiller with session-level advisory locks on the bigint
// key Key(name), or the key that Names derives from a raw name. Session ids are backend pids in decimal.
//
// Catalog names the lock functions and views; nil means the PostgreSQL
// names (PostgresCatalog); NewSessionLocker sets the catalog Detect found
// (Info.Facts) where it differs.
//
// Advisory locks stack within a session (two locks need two unlocks) and
// survive COMMIT and ROLLBACK; sqlkit.SessionLocker takes each lock on a
// fresh connection and releases it once, so no lock stacks.
type SessionOps struct {
	Catalog *Catalog
	// Names are the session names Info.SessionNames asked for: the key of
	// a raw name comes from its derivation (see keyFuncOf); scoped names, the
	// default, take Key.
	Names dialects.SessionNames
}

var (
	_ sqlkit.SessionOps    = SessionOps{}
	_ sqlkit.SessionKiller = SessionOps{}
	_ sqlkit.SessionPinger = SessionOps{}
)

// names is the catalog for statements on a connection.
func (o SessionOps) names() Catalog {
	if o.Catalog != nil {
		return *o.Catalog
	}
	return PostgresCatalog
}

// namesFor is the catalog for statements on db.
func (o SessionOps) namesFor(*sql.DB) Catalog { return o.names() }

// TryLock runs SELECT pg_try_advisory_lock(key) on conn.
func (o SessionOps) TryLock(ctx context.Context, conn *sql.Conn, name string) (bool, error) {
	c := o.names()
	var ok bool
	if err := conn.QueryRowContext(ctx, c.tryLockSQL(), o.key(name)).Scan(&ok); err != nil {
		return false, fmt.Errorf("%s: %w", c.TryLock, err)
	}
	return ok, nil
}

// Unlock runs SELECT pg_advisory_unlock(key) on conn; the server answers
// false (and frees nothing) when conn's session does not hold the key.
func (o SessionOps) Unlock(ctx context.Context, conn *sql.Conn, name string) (bool, error) {
	c := o.names()
	var ok bool
	if err := conn.QueryRowContext(ctx, c.unlockSQL(), o.key(name)).Scan(&ok); err != nil {
		return false, fmt.Errorf("%s: %w", c.Unlock, err)
	}
	return ok, nil
}

// Holds reports whether conn's session holds a granted advisory lock on
// Key(name), reading pg_locks.
func (o SessionOps) Holds(ctx context.Context, conn *sql.Conn, name string) (bool, error) {
	c := o.names()
	classid, objid := KeyParts(o.key(name))
	var held bool
	if err := conn.QueryRowContext(ctx, c.holdsSQL(), int64(classid), int64(objid)).Scan(&held); err != nil {
		return false, fmt.Errorf("read %s: %w", c.Locks, err)
	}
	return held, nil
}

// Holder returns the pid, in decimal, of the backend holding the lock on
// name in the current database, or "" when nobody holds it.
func (o SessionOps) Holder(ctx context.Context, db *sql.DB, name string) (string, error) {
	c := o.namesFor(db)
	classid, objid := KeyParts(o.key(name))
	var pid int64
	err := db.QueryRowContext(ctx, c.holderSQL(), int64(classid), int64(objid)).Scan(&pid)
	switch {
	case err == sql.ErrNoRows:
		return "", nil
	case err != nil:
		return "", dialects.Wrap(Name, "holder", fmt.Errorf("read %s: %w", c.Locks, err))
	}
	return strconv.FormatInt(pid, 10), nil
}
