package dialects

import (
	"context"
	"database/sql"
	"fmt"
)

// DB is a database whose dialect has been detected. Detection runs once, in
// Open; everything after reads the cached Info.
type DB struct {
	SQL     *sql.DB
	Dialect *Dialect
	Info    Info
}

// Open detects the database behind db with the named dialect.
func Open(ctx context.Context, db *sql.DB, dialect string) (*DB, error) {
	d, ok := Lookup(dialect)
	if !ok {
		return nil, fmt.Errorf("%w: unknown dialect %q (registered: %v)", ErrUnsupported, dialect, Names())
	}
	info, err := d.Detect(ctx, db)
	if err != nil {
		return nil, Wrap(d.Name, "detect", err)
	}
	info.Dialect = d.Name
	return &DB{SQL: db, Dialect: d, Info: info}, nil
}

// SessionLocker returns the session-strategy locker, or an error matching
// ErrUnsupported that says why this database has none.
func (db *DB) SessionLocker() (Locker, error) {
	if db.Dialect.NewSessionLocker == nil {
		return nil, Wrap(db.Dialect.Name, "session locker", fmt.Errorf("%w: %s has no session locks; use --strategy table", ErrUnsupported, db.Info.Product))
	}
	l, err := db.Dialect.NewSessionLocker(db.SQL, db.Info)
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
