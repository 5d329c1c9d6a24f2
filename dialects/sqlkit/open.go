package sqlkit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/schedlock/schedlock/dialects"
)

// DB is the kit's part of a SQL backend: a database/sql pool whose
// database has been detected, the DSN's x- options, and the backend's
// Engine. A backend's type embeds *DB, which gives it Detected, Locker,
// Probe, the listing and Close; Recommend and the lockers come from the
// Engine. Close closes the pool.
type DB struct {
	SQL     *sql.DB
	Dialect *dialects.Dialect
	Info    dialects.Info

	// options are the DSN's x- options (Target.Options).
	options map[string]string
	engine  Engine
	tables  tablesSeen

	closeOnce sync.Once
	closeErr  error
}

var (
	_ dialects.Backend     = (*DB)(nil)
	_ dialects.LockBreaker = (*DB)(nil)
	_ dialects.Prober      = (*DB)(nil)
)

// New returns the kit's DB for pool, a database of the dialect registered
// as info.Dialect that detection identified as info; engine is the
// backend's own type, which embeds the result. options are the DSN's x-
// options (nil for none). The DB owns pool: its Close closes it.
func New(pool *sql.DB, info dialects.Info, options map[string]string, engine Engine) *DB {
	d, ok := dialects.Lookup(info.Dialect)
	if !ok {
		d = &dialects.Dialect{Name: info.Dialect}
	}
	return &DB{SQL: pool, Dialect: d, Info: info, options: options, engine: engine}
}

// Kit returns db; through the embedding it is how Of finds the kit DB of a
// backend.
func (db *DB) Kit() *DB { return db }

// Of returns the kit DB of backend b when b is a SQL backend (its type
// embeds *DB).
func Of(b dialects.Backend) (*DB, bool) {
	k, ok := b.(interface{ Kit() *DB })
	if !ok {
		return nil, false
	}
	return k.Kit(), true
}

// Connect opens the database/sql pool of t with driver and makes its
// first connection (Reach). The pool never opens more connections than
// t's x-max-conns (LimitConns): an operation that finds them all busy
// waits for one, as long as its context allows. A failed open or
// connection is an *UnreachableError, its cause first passed through
// classify (nil: unchanged).
func Connect(ctx context.Context, t dialects.Target, driver string, classify func(error) error) (*sql.DB, error) {
	pool, err := sql.Open(driver, t.Conn)
	if err != nil {
		return nil, dialects.Unreachable(err)
	}
	LimitConns(pool, t.Options)
	if err := Reach(ctx, pool, classify); err != nil {
		_ = pool.Close()
		return nil, err
	}
	return pool, nil
}

// LimitConns bounds pool to the x-max-conns of options
// (dialects.MaxConnsOf; default dialects.DefaultMaxConns), open and idle.
func LimitConns(pool *sql.DB, options map[string]string) {
	limit := dialects.MaxConnsOf(options)
	pool.SetMaxOpenConns(limit)
	pool.SetMaxIdleConns(limit)
}

// Reach makes the first connection of pool and leaves it in the pool for
// the statements that follow. It sends no statement: the connection's own
// start-up (authentication included) proves the server answers, where a
// ping would cost a round trip of its own. A failure is an
// *UnreachableError, its cause first passed through classify (nil:
// unchanged).
func Reach(ctx context.Context, pool *sql.DB, classify func(error) error) error {
	conn, err := pool.Conn(ctx)
	if err == nil {
		return conn.Close()
	}
	if classify != nil {
		err = classify(err)
	}
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		err = fmt.Errorf("%w (%v)", ctxErr, err)
	}
	return dialects.Unreachable(err)
}

// Open is a SQL backend's Open: Connect with driver and classify, then
// newBackend (the backend's detection and type) on the pool and t's
// options. On any error the pool is closed.
func Open[B dialects.Backend](ctx context.Context, t dialects.Target, driver string, classify func(error) error,
	newBackend func(ctx context.Context, pool *sql.DB, options map[string]string) (B, error)) (dialects.Backend, error) {
	pool, err := Connect(ctx, t, driver, classify)
	if err != nil {
		return nil, err
	}
	return OpenPool(ctx, pool, t.Options, newBackend)
}

// OpenPool is Open on a pool the backend opened itself (with its driver's
// connector and options) and reached (Reach): newBackend on pool and
// options. On an error the pool is closed.
func OpenPool[B dialects.Backend](ctx context.Context, pool *sql.DB, options map[string]string,
	newBackend func(ctx context.Context, pool *sql.DB, options map[string]string) (B, error)) (dialects.Backend, error) {
	b, err := newBackend(ctx, pool, options)
	if err != nil {
		_ = pool.Close()
		return nil, err
	}
	return b, nil
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
	se, ok := db.engine.(SessionEngine)
	if !ok {
		return nil, dialects.Wrap(db.Dialect.Name, "session locker",
			dialects.WithRemedy(fmt.Errorf("%w: %s has no session locks", dialects.ErrUnsupported, db.Info.Product), dialects.UseTableStrategy))
	}
	n, err := db.SessionNames()
	if err != nil {
		return nil, dialects.Wrap(db.Dialect.Name, "session locker", err)
	}
	l, err := se.NewSessionLocker(n)
	return l, dialects.Wrap(db.Dialect.Name, "session locker", err)
}

// TableLocker returns the table-strategy locker for t.
func (db *DB) TableLocker(t dialects.Table) (dialects.TableLocker, error) {
	if _, err := t.Schema(); err != nil {
		return nil, err
	}
	l, err := db.engine.NewTableLocker(t)
	return l, dialects.Wrap(db.Dialect.Name, "table locker", err)
}

// LeaseLocker implements LockBreaker: the lease table t (TableLocker).
func (db *DB) LeaseLocker(t dialects.Table) (dialects.LeaseLocker, error) { return db.TableLocker(t) }

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

// MustOf returns the kit DB of b, which the caller knows to be a SQL
// backend; it panics otherwise.
func MustOf(b dialects.Backend) *DB {
	db, ok := Of(b)
	if !ok {
		panic(fmt.Sprintf("sqlkit: %T is not a SQL backend", b))
	}
	return db
}

// Recommend picks the lock strategy for this database and says why: the
// Engine's RecommendStrategy.
func (db *DB) Recommend() (dialects.Strategy, string) { return db.engine.RecommendStrategy() }
