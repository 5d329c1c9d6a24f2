package dsn

import (
	"strings"

	"github.com/schedlock/schedlock/dialects"
)

// The DSN grammars that are not URLs name their family themselves:
// go-sql-driver's own form is MySQL's, libpq's key=value form
// PostgreSQL's. Every other fact about a database (its schemes, ports,
// drivers, file extensions) is its registry entry's.
const (
	FamilyPostgres = "postgres"
	FamilyMySQL    = "mysql"
)

// supportedSchemes is the list shown when a scheme is unknown: every
// registered entry's Forms.
func supportedSchemes() string {
	var forms []string
	for _, d := range dialects.Dialects() {
		if d.Forms != "" {
			forms = append(forms, d.Forms)
		}
	}
	if len(forms) == 0 {
		return "(no database support is compiled in)"
	}
	return strings.Join(forms, ", ")
}

// entryFor returns the registered dialect called family, or an error
// matching dialects.ErrUnsupported naming what this build has.
func entryFor(family string) (*dialects.Dialect, error) {
	if d, ok := dialects.Lookup(family); ok {
		return d, nil
	}
	return nil, &noDialectError{family: family}
}
