package oracle

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
)

// oldIdentifierBytes is the identifier limit before Oracle 12.2 (128 from
// 12.2 on).
const oldIdentifierBytes = 30

// TableLocker is the lease-table locker: the locktable engine with Oracle's
// SQL (Builder), plus the two places where Oracle answers with an error
// what other databases answer with a row count: ORA-00001 on acquire (two
// first inserts of one name raced and the other one won: the lock is held)
// and ORA-00955 on create (the table exists). Every other method is the
// engine's.
type TableLocker struct {
	*locktable.Locker
}

var (
	_ dialects.TableLocker  = (*TableLocker)(nil)
	_ dialects.TableDropper = (*TableLocker)(nil)
)

// NewTableLocker returns the lease-table locker for table t. Before 12.2,
// where identifiers are limited to 30 bytes, a longer table or schema name
// is refused with dialects.ErrInvalid, naming the limit.
func NewTableLocker(db *sql.DB, info dialects.Info, t dialects.Table) (dialects.TableLocker, error) {
	schema, err := t.Schema()
	if err != nil {
		return nil, dialects.Wrap(Name, "table locker", err)
	}
	if info.Version != "" && !versionAtLeast(info.Version, 12, 2) {
		for _, part := range strings.Split(schema.Table, ".") {
			if len(part) > oldIdentifierBytes {
				return nil, dialects.Wrap(Name, "table locker", dialects.Invalidf(
					"Oracle %s limits identifiers to %d bytes, and %q has %d: give a shorter table name (12.2 and later allow 128)",
					info.Version, oldIdentifierBytes, part, len(part)))
			}
		}
	}
	l, err := locktable.New(db, &Builder{}, t)
	if err != nil {
		return nil, dialects.Wrap(Name, "table locker", err)
	}
	return &TableLocker{Locker: l}, nil
}

// Acquire takes the lock as locktable.Locker.Acquire does, one try at a
// time, and treats an ORA-00001 from the MERGE as the lock being held by
// the racer whose insert won (a *dialects.HeldError naming it), retrying
// while opts.Wait allows.
func (l *TableLocker) Acquire(ctx context.Context, name string, opts dialects.Options) (dialects.Lease, error) {
	if err := dialects.CheckName(name); err != nil {
		return nil, dialects.Wrap(Name, "acquire", err)
	}
	opts, err := opts.Normalize()
	if err != nil {
		return nil, dialects.Wrap(Name, "acquire", err)
	}
	once := opts
	once.Wait = 0
	deadline := time.Now().Add(opts.Wait)
	for {
		lease, err := l.Locker.Acquire(ctx, name, once)
		if IsDuplicateKey(err) {
			err = l.heldAfterRace(ctx, name)
		}
		if err == nil || !errors.Is(err, dialects.ErrHeld) {
			return lease, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, err
		}
		timer := time.NewTimer(min(opts.RetryEvery, left))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, dialects.Wrap(Name, "acquire", fmt.Errorf("gave up waiting: %w (last try: %v)", ctx.Err(), err))
		case <-timer.C:
		}
	}
}

// heldAfterRace is the refusal after an ORA-00001: the row another session
// inserted a moment ago names the holder.
func (l *TableLocker) heldAfterRace(ctx context.Context, name string) error {
	held := &dialects.HeldError{Name: name}
	if row, found, err := l.Inspect(ctx, name); err == nil && found {
		held.Holder, held.Until = row.Owner, row.Until
	}
	return dialects.Wrap(Name, "acquire", held)
}

// CreateTable creates the lock table; one that exists already (ORA-00955)
// is success.
func (l *TableLocker) CreateTable(ctx context.Context) error {
	err := l.Locker.CreateTable(ctx)
	if oraCode(err) == oraNameInUse {
		return nil
	}
	return err
}
