package sqlkit

import (
	"sync"

	"github.com/schedlock/schedlock/dialects"
)

var _ dialects.LeaseTableWitness = (*DB)(nil)

// OptionsTable is the plain name of the lease table that options (the
// DSN's x- options: x-table, x-preset) name, as the lockers and the pause
// check of lock.Open and `schedlock run` use it; "" when they name an
// invalid table. Detection looks for it in a statement it sends anyway
// (SawTable), so that a handle on a database without a lease table reads
// no pause.
func OptionsTable(options map[string]string) string {
	s, err := dialects.Table{Preset: options["preset"], Name: options["table"]}.Schema()
	if err != nil {
		return ""
	}
	return s.Table
}

// tablesSeen is what detection learned about lease tables, by plain name.
type tablesSeen struct {
	mu   sync.Mutex
	seen map[string]bool
}

// SawTable records that the lease table called name (its plain name, as
// OptionsTable gives it) existed, or did not, when the backend was
// opened. A backend records only what it proved: a name it could not look
// for stays unknown.
func (db *DB) SawTable(name string, exists bool) {
	if name == "" {
		return
	}
	db.tables.mu.Lock()
	defer db.tables.mu.Unlock()
	if db.tables.seen == nil {
		db.tables.seen = map[string]bool{}
	}
	db.tables.seen[name] = exists
}

// LeaseTableExists implements dialects.LeaseTableWitness: whether the
// lease table t existed when the backend was opened, when detection
// looked for it (SawTable).
func (db *DB) LeaseTableExists(t dialects.Table) (exists, known bool) {
	s, err := t.Schema()
	if err != nil {
		return false, false
	}
	db.tables.mu.Lock()
	defer db.tables.mu.Unlock()
	exists, known = db.tables.seen[s.Table]
	return exists, known
}
