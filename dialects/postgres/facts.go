package postgres

import (
	"github.com/schedlock/schedlock/dialects"
)

// serverFacts is what Detect proved about a server beyond its Info, for
// the products whose behaviour it does not take on trust (KingbaseES,
// openGauss): which catalog names exist, and whether advisory locks
// really exclude a second session. Detect stores it in Info.Facts, so it
// belongs to the one detected database.
type serverFacts struct {
	catalog Catalog
	// advisory is the two-connection probe of the advisory lock functions
	// (sqlkit.ProbeSessionOps) run by Detect; Status is empty when it
	// could not run because a name it needs is missing (catalog.missing).
	advisory dialects.Capability
}

// proven reports whether the advisory probe proved exclusion.
func (f serverFacts) proven() bool { return f.advisory.Status == dialects.StatusYes }

// factsOf returns the facts Detect recorded in info.
func factsOf(info dialects.Info) (serverFacts, bool) {
	f, ok := info.Facts.(*serverFacts)
	if !ok || f == nil {
		return serverFacts{}, false
	}
	return *f, true
}

// catalogOf is the catalog to use on the database of info: the one Detect
// found, else the PostgreSQL names.
func catalogOf(info dialects.Info) Catalog {
	if f, ok := factsOf(info); ok {
		return f.catalog
	}
	return PostgresCatalog
}
