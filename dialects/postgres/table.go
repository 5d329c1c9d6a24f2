package postgres

import (
	"database/sql"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
)

// NewTableLocker returns the lease-table locker for t, with the SQL of
// NewBuilder(info). It sends nothing; a missing table shows up on first use.
func NewTableLocker(db *sql.DB, info dialects.Info, t dialects.Table) (dialects.TableLocker, error) {
	l, err := locktable.New(db, NewBuilder(info), t)
	if err != nil {
		return nil, dialects.Wrap(Name, "table locker", err)
	}
	return l, nil
}
