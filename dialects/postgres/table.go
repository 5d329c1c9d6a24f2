package postgres

import (
	"database/sql"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
)

// NewTableLocker returns the lease-table locker for t, with Builder's SQL.
// It sends nothing; a missing table shows up on first use.
func NewTableLocker(db *sql.DB, _ dialects.Info, t dialects.Table) (dialects.TableLocker, error) {
	l, err := locktable.New(db, Builder{}, t)
	if err != nil {
		return nil, dialects.Wrap(Name, "table locker", err)
	}
	return l, nil
}
