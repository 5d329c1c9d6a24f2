package postgres

import (
	"database/sql"
	"runtime"
	"sync"
	"weak"

	"github.com/schedlock/schedlock/dialects"
)

// serverFacts is what Detect proved about a server beyond its Info, for
// the products whose behaviour it does not take on trust (KingbaseES,
// openGauss): which catalog names exist, and whether advisory locks
// really exclude a second session.
type serverFacts struct {
	catalog Catalog
	// advisory is the two-connection probe of the advisory lock functions
	// (dialects.ProbeSessionOps) run by Detect; Status is empty when it
	// could not run because a name it needs is missing (catalog.missing).
	advisory dialects.Capability
}

// proven reports whether the advisory probe proved exclusion.
func (f serverFacts) proven() bool { return f.advisory.Status == dialects.StatusYes }

// The facts, by database (for NewSessionLocker, Kill, Holder) and by Info
// (for Recommend, which sees nothing else). Entries for a *sql.DB go away
// when it is garbage collected. Two servers that detect to the same Info
// (same banner and mode) share the Info entry; a failed proof is kept over
// a passed one, so sharing can only make the recommendation more careful.
var (
	factsByDB   sync.Map // weak.Pointer[sql.DB] → serverFacts
	factsByInfo sync.Map // dialects.Info → serverFacts
)

// rememberFacts records what Detect proved about db, whose Info is info.
func rememberFacts(db *sql.DB, info dialects.Info, f serverFacts) {
	key := weak.Make(db)
	if _, loaded := factsByDB.Swap(key, f); !loaded {
		runtime.AddCleanup(db, func(k weak.Pointer[sql.DB]) { factsByDB.Delete(k) }, key)
	}
	if old, ok := factsByInfo.Load(info); ok && old.(serverFacts).advisory.Status != "" && !old.(serverFacts).proven() && f.proven() {
		return
	}
	factsByInfo.Store(info, f)
}

// factsFor returns the facts Detect recorded for db, else those of the
// last Detect that produced info.
func factsFor(db *sql.DB, info dialects.Info) (serverFacts, bool) {
	if db != nil {
		if v, ok := factsByDB.Load(weak.Make(db)); ok {
			return v.(serverFacts), true
		}
	}
	return factsForInfo(info)
}

// factsForInfo returns the facts of the last Detect that produced info.
func factsForInfo(info dialects.Info) (serverFacts, bool) {
	v, ok := factsByInfo.Load(info)
	if !ok {
		return serverFacts{}, false
	}
	return v.(serverFacts), true
}

// catalogFor is the catalog to use on db: the one Detect found, else the
// PostgreSQL names.
func catalogFor(db *sql.DB, info dialects.Info) Catalog {
	if f, ok := factsFor(db, info); ok {
		return f.catalog
	}
	return PostgresCatalog
}
