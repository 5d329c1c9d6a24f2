package sqlkit

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/schedlock/schedlock/dialects"
)

// legacyEngine runs a Dialect's SQL hooks as an Engine.
type legacyEngine struct {
	db *DB
}

type legacyProbing struct{ *legacyEngine }

func (l *legacyEngine) NewTableLocker(t dialects.Table) (dialects.TableLocker, error) {
	if l.db.Dialect.NewTableLocker == nil {
		return nil, fmt.Errorf("%w: no lease table for %s", dialects.ErrUnsupported, l.db.Info.Product)
	}
	return l.db.Dialect.NewTableLocker(l.db.SQL, l.db.Info, t)
}

func (l *legacyEngine) RecommendStrategy() (dialects.Strategy, string) {
	if l.db.Dialect.Recommend == nil {
		return dialects.StrategyTable, "the lease table works on every database"
	}
	return l.db.Dialect.Recommend(l.db.Info)
}

func (l *legacyEngine) NewSessionLocker(n dialects.SessionNames) (dialects.Locker, error) {
	if l.db.Dialect.NewSessionLocker == nil {
		return nil, dialects.WithRemedy(fmt.Errorf("%w: %s has no session locks", dialects.ErrUnsupported, l.db.Info.Product), dialects.UseTableStrategy)
	}
	info := l.db.Info
	info.SessionNames = n
	return l.db.Dialect.NewSessionLocker(l.db.SQL, info)
}

func (l *legacyEngine) NewLockAdmin(n dialects.SessionNames) dialects.LockAdmin {
	if l.db.Dialect.NewLockAdmin == nil {
		return nil
	}
	info := l.db.Info
	info.SessionNames = n
	return l.db.Dialect.NewLockAdmin(l.db.SQL, info)
}

func (l legacyProbing) ProbeDialect(ctx context.Context, opts dialects.ProbeOptions) (dialects.Capabilities, error) {
	return l.db.Dialect.Probe(ctx, l.db.SQL, l.db.Info, opts)
}

// OpenLegacy detects the database behind pool with the named dialect's
// Detect hook.
func OpenLegacy(ctx context.Context, pool *sql.DB, dialect string) (*DB, error) {
	d, ok := dialects.Lookup(dialect)
	if !ok {
		return nil, fmt.Errorf("%w: unknown dialect %q (registered: %v)", dialects.ErrUnsupported, dialect, dialects.Names())
	}
	if d.Detect == nil {
		return nil, fmt.Errorf("%w: the %s backend is not database/sql", dialects.ErrUnsupported, d.Name)
	}
	info, err := d.Detect(ctx, pool)
	if err != nil {
		return nil, dialects.Wrap(d.Name, "detect", err)
	}
	info.Dialect = d.Name
	return New(pool, info, nil, nil), nil
}

// OpenTarget opens t with dialect d: its Open, or the legacy SQL hooks.
func OpenTarget(ctx context.Context, d *dialects.Dialect, t dialects.Target) (dialects.Backend, error) {
	if d.Open != nil {
		return d.Open(ctx, t)
	}
	var classify func(error) error
	if d.ClassifyError != nil {
		classify = d.ClassifyError
	}
	pool, err := Connect(ctx, t, d.Driver, classify)
	if err != nil {
		return nil, err
	}
	db, err := OpenLegacy(ctx, pool, d.Name)
	if err != nil {
		_ = pool.Close()
		return nil, err
	}
	db.options = t.Options
	return db, nil
}

// OpenSQLTarget opens t with the legacy SQL hooks of d.
func OpenSQLTarget(ctx context.Context, d *dialects.Dialect, t dialects.Target) (*DB, error) {
	b, err := OpenTarget(ctx, &dialects.Dialect{Name: d.Name, Driver: d.Driver, Detect: d.Detect, ClassifyError: d.ClassifyError}, t)
	if err != nil {
		return nil, err
	}
	return b.(*DB), nil
}

// eng is db's engine; a DB made without one runs its Dialect's hooks.
func (db *DB) eng() Engine {
	if db.engine != nil {
		return db.engine
	}
	le := &legacyEngine{db: db}
	if db.Dialect.Probe != nil {
		return legacyProbing{le}
	}
	return le
}
