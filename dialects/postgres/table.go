package postgres

import (
	"database/sql"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
)

// newTableLocker is Backend.NewTableLocker for the database of info on db.
func newTableLocker(db *sql.DB, info dialects.Info, t dialects.Table) (dialects.TableLocker, error) {
	l, err := locktable.New(db, NewBuilder(info), t)
	if err != nil {
		return nil, dialects.Wrap(Name, "table locker", err)
	}
	return l, nil
}
