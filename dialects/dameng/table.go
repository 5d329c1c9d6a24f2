package dameng

import (
	"context"
	"database/sql"
	"strconv"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
)

// TableLocker is the lease-table locker: the locktable engine with DM8's
// SQL (Builder, whose duplicate-key errors the engine reports as "held"),
// plus CreateTable, which treats a table that already exists as success.
type TableLocker struct {
	*locktable.Locker
}

var (
	_ dialects.TableLocker  = (*TableLocker)(nil)
	_ dialects.TableDropper = (*TableLocker)(nil)
	_ dialects.ColumnReader = (*TableLocker)(nil)
)

// NewTableLocker returns the lease-table locker for table t. It sends
// nothing; a missing table shows up on first use as a
// *dialects.MissingTableError.
func NewTableLocker(db *sql.DB, _ dialects.Info, t dialects.Table) (dialects.TableLocker, error) {
	l, err := locktable.New(db, &Builder{}, t)
	if err != nil {
		return nil, dialects.Wrap(Name, "table locker", err)
	}
	return &TableLocker{Locker: l}, nil
}

// CreateTable creates the lock table. CREATE TABLE fails on a table that
// exists; when the table's columns can then be read, it exists and that is
// success, whatever error code this DM release gives for "already
// exists".
func (l *TableLocker) CreateTable(ctx context.Context) error {
	err := l.Locker.CreateTable(ctx)
	if err == nil {
		return nil
	}
	if _, colErr := l.Columns(ctx); colErr == nil {
		return nil
	}
	return err
}

func itoa(n int) string { return strconv.Itoa(n) }
