package sqlkit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/schedlock/schedlock/dialects"
)

// DB is the SQL family's Backend: a database/sql pool whose dialect has
// been detected. Detection runs once, in Open or OpenSQL; everything after
// reads Info, which also carries what detection proved (Info.Facts) for
// this database alone. Close closes the pool.
type DB struct {
	SQL     *sql.DB
	Dialect *dialects.Dialect
	Info    dialects.Info

	// options are the DSN's x- options (Target.Options); nil for a DB
	// opened by Open.
	options map[string]string

	closeOnce sync.Once
	closeErr  error
}

var (
	_ dialects.Backend     = (*DB)(nil)
	_ dialects.LockBreaker = (*DB)(nil)
	_ dialects.Prober      = (*DB)(nil)
)

// Open detects the database behind db with the named dialect. The returned
// DB owns db: its Close closes db.
func Open(ctx context.Context, db *sql.DB, dialect string) (*DB, error) {
	d, ok := dialects.Lookup(dialect)
	if !ok {
		return nil, fmt.Errorf("%w: unknown dialect %q (registered: %v)", dialects.ErrUnsupported, dialect, dialects.Names())
	}
	if d.Detect == nil {
		return nil, fmt.Errorf("%w: the %s backend is not database/sql", dialects.ErrUnsupported, d.Name)
	}
	info, err := d.Detect(ctx, db)
	if err != nil {
		return nil, dialects.Wrap(d.Name, "detect", err)
	}
	info.Dialect = d.Name
	return &DB{SQL: db, Dialect: d, Info: info}, nil
}

// OpenTarget opens t with dialect d: its Open, or for the SQL family the
// driver's pool, a ping (failures are *UnreachableError) and detection.
func OpenTarget(ctx context.Context, d *dialects.Dialect, t dialects.Target) (dialects.Backend, error) {
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
func OpenSQL(ctx context.Context, d *dialects.Dialect, t dialects.Target) (*DB, error) {
	driver := d.Driver
	if driver == "" {
		driver = t.Driver
	}
	pool, err := sql.Open(driver, t.Conn)
	if err != nil {
		return nil, dialects.Unreachable(err)
	}
	if err := pool.PingContext(ctx); err != nil {
		_ = pool.Close()
		if d.ClassifyError != nil {
			err = d.ClassifyError(err)
		}
		if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			err = fmt.Errorf("%w (%v)", ctxErr, err)
		}
		return nil, dialects.Unreachable(err)
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
func (db *DB) Detected() dialects.Info { return db.Info }

// Close closes the pool. Connections pinned by leases still held are
// closed when those leases end. A second Close returns the first's result.
func (db *DB) Close() error {
	db.closeOnce.Do(func() { db.closeErr = db.SQL.Close() })
	return db.closeErr
}

// SessionLocker returns the session-strategy locker, or an error matching
// ErrUnsupported that says why this database has none.
func (db *DB) SessionLocker() (dialects.Locker, error) {
	if db.Dialect.NewSessionLocker == nil {
		return nil, dialects.Wrap(db.Dialect.Name, "session locker",
			dialects.WithRemedy(fmt.Errorf("%w: %s has no session locks", dialects.ErrUnsupported, db.Info.Product), dialects.UseTableStrategy))
	}
	info, err := db.namedInfo()
	if err != nil {
		return nil, dialects.Wrap(db.Dialect.Name, "session locker", err)
	}
	l, err := db.Dialect.NewSessionLocker(db.SQL, info)
	return l, dialects.Wrap(db.Dialect.Name, "session locker", err)
}

// TableLocker returns the table-strategy locker for t.
func (db *DB) TableLocker(t dialects.Table) (dialects.TableLocker, error) {
	if _, err := t.Schema(); err != nil {
		return nil, err
	}
	if db.Dialect.NewTableLocker == nil {
		return nil, dialects.Wrap(db.Dialect.Name, "table locker", fmt.Errorf("%w: no lease table for %s", dialects.ErrUnsupported, db.Info.Product))
	}
	l, err := db.Dialect.NewTableLocker(db.SQL, db.Info, t)
	return l, dialects.Wrap(db.Dialect.Name, "table locker", err)
}

// Locker returns the locker for strategy; the table t applies to the table
// strategy only.
func (db *DB) Locker(strategy dialects.Strategy, t dialects.Table) (dialects.Locker, error) {
	switch strategy {
	case dialects.StrategySession:
		return db.SessionLocker()
	case dialects.StrategyTable:
		return db.TableLocker(t)
	default:
		return nil, dialects.Invalidf("unknown strategy %q: use session or table", strategy)
	}
}

// Recommend picks the lock strategy for this database and says why.
func (db *DB) Recommend() (dialects.Strategy, string) {
	if db.Dialect.Recommend == nil {
		return dialects.StrategyTable, "the lease table works on every database"
	}
	return db.Dialect.Recommend(db.Info)
}
