package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// newSessionLocker is Backend.NewSessionLocker for the database of info
// on db, of which detection proved facts (nil: nothing).
func newSessionLocker(db *sql.DB, info dialects.Info, facts *serverFacts, n dialects.SessionNames) (dialects.Locker, error) {
	if err := SessionRefusal(info); err != nil {
		return nil, dialects.Wrap(Name, "session locker", err)
	}
	ops := SessionOps{Names: n}
	if provenOnly(info) {
		if err := unprovenRefusal(facts, info); err != nil {
			return nil, dialects.Wrap(Name, "session locker", err)
		}
		if c := catalogOf(facts); c != PostgresCatalog {
			ops.Catalog = &c
		}
	}
	return &sqlkit.SessionLocker{Dialect: Name, DB: db, Ops: ops}, nil
}

// SessionRefusal says why the product of info has no session locks
// whatever detection proves, with the table strategy as its remedy, or
// nil: CockroachDB (its advisory lock functions are stubs that lock
// nothing) and YugabyteDB before 2025.1 (advisory locks refused or
// unreliable) are refused. The error matches dialects.ErrUnsupported.
// Backend.NewSessionLocker adds what detection proved on KingbaseES and
// openGauss.
func SessionRefusal(info dialects.Info) error {
	switch {
	case info.Product == dialects.ProductCockroachDB:
		return dialects.WithRemedy(fmt.Errorf("%w: CockroachDB's pg_try_advisory_lock is a stub that always returns true, so two holders would both get the lock", dialects.ErrUnsupported), dialects.UseTableStrategy)
	case info.Product == dialects.ProductYugabyteDB && !versionAtLeast(info.Version, yugabyteAdvisoryGA...):
		return dialects.WithRemedy(fmt.Errorf("%w: YugabyteDB %s has no reliable advisory locks (generally available from 2025.1)", dialects.ErrUnsupported, info.Version), dialects.UseTableStrategy)
	}
	return nil
}

// SessionOps implements sqlkit.SessionOps with session-level advisory locks on the bigint
// key Key(name), or the key that Names derives from a raw name. Session ids are backend pids in decimal.
//
// Catalog names the lock functions and views; nil means the PostgreSQL
// names (PostgresCatalog); Backend.NewSessionLocker sets the catalog
// detection found where it differs.
//
// Advisory locks stack within a session (two locks need two unlocks) and
// survive COMMIT and ROLLBACK; sqlkit.SessionLocker takes each lock on a
// fresh connection and releases it once, so no lock stacks.
type SessionOps struct {
	Catalog *Catalog
	// Names are the session names the DSN asked for: the key of a raw
	// name comes from its derivation (see keyFuncOf); scoped names, the
	// default, take Key.
	Names dialects.SessionNames
}

var (
	_ sqlkit.SessionOps    = SessionOps{}
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
