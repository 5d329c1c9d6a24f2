package sqlserver

import (
	"database/sql"
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
	return l, nil
}
