package postgres

import (
	"github.com/schedlock/schedlock/dialects"
)

// serverFacts is what detection proved about a server beyond its Info,
// for the products whose behaviour it does not take on trust
// (KingbaseES, openGauss): which catalog names exist, and whether
// advisory locks really exclude a second session. The Backend of that
// one detected database keeps it.
type serverFacts struct {
	catalog Catalog
	// advisory is the two-connection probe of the advisory lock functions
	// (sqlkit.ProbeSessionOps) run at detection; Status is empty when it
	// could not run because a name it needs is missing (catalog.missing).
	advisory dialects.Capability
}

// proven reports whether the advisory probe proved exclusion.
func (f serverFacts) proven() bool { return f.advisory.Status == dialects.StatusYes }

// catalogOf is the catalog to use on a server of which detection proved
// f: the one it found, else (f nil) the PostgreSQL names.
func catalogOf(f *serverFacts) Catalog {
	if f != nil {
		return f.catalog
	}
	return PostgresCatalog
}
