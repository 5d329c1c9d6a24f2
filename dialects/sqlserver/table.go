package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
)

// NewTableLocker returns the lease-table locker for t, with Builder's SQL.
// It sends nothing; a missing table shows up on first use. It refuses
// Azure Synapse, which has no OUTPUT clause, with an error matching
// dialects.ErrUnsupported.
func NewTableLocker(db *sql.DB, info dialects.Info, t dialects.Table) (dialects.TableLocker, error) {
	if isSynapse(info) {
		return nil, dialects.Wrap(Name, "table locker", fmt.Errorf("%w: %s", dialects.ErrUnsupported, synapseRefusal))
	}
	l, err := locktable.New(db, Builder{}, t)
	if err != nil {
		return nil, dialects.Wrap(Name, "table locker", err)
	}
	return newTableLocker(l, Builder{}), nil
}

// TableLocker is the lease-table engine with SQL Server's names: every
// name is stored as FitName(name, column length), so names that SQL
// Server's comparisons would confuse (trailing spaces) or that do not fit
// the nvarchar column (counted in UTF-16 code units) stay distinct and
// exact. The engine's own mapping counts characters and knows nothing of
// trailing spaces, and a Builder cannot replace it, so this wrapper stays
// for the names alone.
//
// Duplicate keys are the engine's business: Builder is a
// locktable.DuplicateKeyer, so a 2627 or 2601 on acquire (another session
// inserted the same name first; MERGE WITH (HOLDLOCK) prevents that race,
// but not for tables whose name is unique through another index or
// writers without HOLDLOCK) is the lock held, not an error.
//
// Everything else is *locktable.Locker's, which it embeds.
type TableLocker struct {
	*locktable.Locker
	limit int // name column length, UTF-16 code units
}

var (
	_ dialects.TableLocker  = (*TableLocker)(nil)
	_ dialects.TableDropper = (*TableLocker)(nil)
	_ dialects.ColumnReader = (*TableLocker)(nil)
)

func newTableLocker(l *locktable.Locker, b locktable.Builder) *TableLocker {
	return &TableLocker{Locker: l, limit: b.MaxNameRunes(l.Schema())}
}

// StoredName is the name as the table stores it: FitName(name, column
// length).
func (l *TableLocker) StoredName(name string) string { return FitName(name, l.limit) }

// Acquire takes the lock called name under its stored name (see
// locktable.Locker.Acquire, which tries once when opts.Wait is 0 and
// retries until opts.Wait has passed otherwise). The lease and a
// *dialects.HeldError carry the caller's name.
func (l *TableLocker) Acquire(ctx context.Context, name string, opts dialects.Options) (dialects.Lease, error) {
	if err := dialects.CheckName(name); err != nil {
		return nil, dialects.Wrap(Name, "acquire", err)
	}
	lease, err := l.Locker.Acquire(ctx, l.StoredName(name), opts)
	if err != nil {
		var held *dialects.HeldError
		if errors.As(err, &held) {
			held.Name = name
		}
		return nil, err
	}
	return &namedLease{Lease: lease, name: name}, nil
}

// Handle rebuilds the lease of a lock that owner holds (see
// locktable.Locker.Handle).
func (l *TableLocker) Handle(name, owner string, token int64, opts dialects.Options) (dialects.Lease, error) {
	if err := dialects.CheckName(name); err != nil {
		return nil, dialects.Wrap(Name, "handle", err)
	}
	lease, err := l.Locker.Handle(l.StoredName(name), owner, token, opts)
	if err != nil {
		return nil, err
	}
	return &namedLease{Lease: lease, name: name}, nil
}

// Inspect reads the row of name; Row.Name is the stored name.
func (l *TableLocker) Inspect(ctx context.Context, name string) (dialects.Row, bool, error) {
	if err := dialects.CheckName(name); err != nil {
		return dialects.Row{}, false, dialects.Wrap(Name, "inspect", err)
	}
	return l.Locker.Inspect(ctx, l.StoredName(name))
}

// Expire ends the lease of name now, whoever holds it (see
// locktable.Locker.Expire).
func (l *TableLocker) Expire(ctx context.Context, name string) (bool, error) {
	if err := dialects.CheckName(name); err != nil {
		return false, dialects.Wrap(Name, "expire", err)
	}
	return l.Locker.Expire(ctx, l.StoredName(name))
}

// namedLease reports the caller's name for a lease taken under its stored
// name.
type namedLease struct {
	dialects.Lease
	name string
}

func (s *namedLease) Name() string { return s.name }
