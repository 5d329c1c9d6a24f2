package dialects

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// DB is the SQL family's Backend: a database/sql pool whose dialect has
// been detected. Detection runs once, in Open or OpenSQL; everything after
// reads Info, which also carries what detection proved (Info.Facts) for
// this database alone. Close closes the pool.
type DB struct {
	SQL     *sql.DB
	Dialect *Dialect
	Info    Info

	// options are the DSN's x- options (Target.Options); nil for a DB
	// opened by Open.
	options map[string]string

	closeOnce sync.Once
	closeErr  error
}

var (
	_ Backend     = (*DB)(nil)
	_ LockBreaker = (*DB)(nil)
	_ Prober      = (*DB)(nil)
)

// Open detects the database behind db with the named dialect. The returned
// DB owns db: its Close closes db.
func Open(ctx context.Context, db *sql.DB, dialect string) (*DB, error) {
	d, ok := Lookup(dialect)
	if !ok {
		return nil, fmt.Errorf("%w: unknown dialect %q (registered: %v)", ErrUnsupported, dialect, Names())
	}
	if d.Detect == nil {
		return nil, fmt.Errorf("%w: the %s backend is not database/sql", ErrUnsupported, d.Name)
	}
	info, err := d.Detect(ctx, db)
	if err != nil {
		return nil, Wrap(d.Name, "detect", err)
	}
	info.Dialect = d.Name
	return &DB{SQL: db, Dialect: d, Info: info}, nil
}

// OpenTarget opens t with dialect d: its Open, or for the SQL family the
// driver's pool, a ping (failures are *UnreachableError) and detection.
func OpenTarget(ctx context.Context, d *Dialect, t Target) (Backend, error) {
	if d.Open != nil {
		return d.Open(ctx, t)
	}
	db, err := OpenSQL(ctx, d, t)
	if err != nil {
		return nil, err
	}
	return db, nil
}

// OpenSQL opens the database/sql pool of t with d's driver, pings it and
// detects the database. A failed open or ping is an *UnreachableError; on
// any error the pool is closed.
func OpenSQL(ctx context.Context, d *Dialect, t Target) (*DB, error) {
	driver := d.Driver
	if driver == "" {
		driver = t.Driver
	}
	pool, err := sql.Open(driver, t.Conn)
	if err != nil {
		return nil, Unreachable(err)
	}
	if err := pool.PingContext(ctx); err != nil {
		_ = pool.Close()
		if d.ClassifyError != nil {
			err = d.ClassifyError(err)
		}
		if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			err = fmt.Errorf("%w (%v)", ctxErr, err)
		}
		return nil, Unreachable(err)
	}
	db, err := Open(ctx, pool, d.Name)
	if err != nil {
		_ = pool.Close()
		return nil, err
	}
	db.options = t.Options
	return db, nil
}

// Detected returns Info.
func (db *DB) Detected() Info { return db.Info }

// Close closes the pool. Connections pinned by leases still held are
// closed when those leases end. A second Close returns the first's result.
func (db *DB) Close() error {
	db.closeOnce.Do(func() { db.closeErr = db.SQL.Close() })
	return db.closeErr
}

// SessionLocker returns the session-strategy locker, or an error matching
// ErrUnsupported that says why this database has none.
func (db *DB) SessionLocker() (Locker, error) {
	if db.Dialect.NewSessionLocker == nil {
		return nil, Wrap(db.Dialect.Name, "session locker",
			WithRemedy(fmt.Errorf("%w: %s has no session locks", ErrUnsupported, db.Info.Product), UseTableStrategy))
	}
	info, err := db.namedInfo()
	if err != nil {
		return nil, Wrap(db.Dialect.Name, "session locker", err)
	}
	l, err := db.Dialect.NewSessionLocker(db.SQL, info)
	return l, Wrap(db.Dialect.Name, "session locker", err)
}

// TableLocker returns the table-strategy locker for t.
func (db *DB) TableLocker(t Table) (TableLocker, error) {
	if _, err := t.Schema(); err != nil {
		return nil, err
	}
	if db.Dialect.NewTableLocker == nil {
		return nil, Wrap(db.Dialect.Name, "table locker", fmt.Errorf("%w: no lease table for %s", ErrUnsupported, db.Info.Product))
	}
	l, err := db.Dialect.NewTableLocker(db.SQL, db.Info, t)
	return l, Wrap(db.Dialect.Name, "table locker", err)
}

// Locker returns the locker for strategy; the table t applies to the table
// strategy only.
func (db *DB) Locker(strategy Strategy, t Table) (Locker, error) {
	switch strategy {
	case StrategySession:
		return db.SessionLocker()
	case StrategyTable:
		return db.TableLocker(t)
	default:
		return nil, invalidf("unknown strategy %q: use session or table", strategy)
	}
}

// Recommend picks the lock strategy for this database and says why.
func (db *DB) Recommend() (Strategy, string) {
	if db.Dialect.Recommend == nil {
		return StrategyTable, "the lease table works on every database"
	}
	return db.Dialect.Recommend(db.Info)
}
