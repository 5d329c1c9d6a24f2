package dsn

import (
	"fmt"
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
			// The first form of each: with every backend linked, all
			// of them no longer fit one line (docs/dsn.md has them).
			first, _, _ := strings.Cut(d.Forms, ", ")
			first, _, _ = strings.Cut(first, " (")
			forms = append(forms, first)
		}
	}
	if len(forms) == 0 {
		return fmt.Sprintf("a URL of a linked backend; none is linked: add an import such as _ %q", backendsPath+"postgres")
	}
	return strings.Join(forms, ", ") + " (every form: docs/dsn.md)"
}

// entryFor returns the registered dialect called family, or an error
// matching dialects.ErrUnsupported naming what this build has.
func entryFor(family string) (*dialects.Dialect, error) {
	if d, ok := dialects.Lookup(family); ok {
		if len(d.Schemes) > 0 { // a registration conflict fails here as in a URL
			if _, _, err := dialects.ForScheme(d.Schemes[0].Name); err != nil {
				return nil, err
			}
		}
		return d, nil
	}
	if b, ok := knownByName(family); ok {
		what := family + " DSNs"
		switch family {
		case FamilyPostgres:
			what = "key=value DSNs (host=… dbname=…)"
		case FamilyMySQL:
			what = "go-sql-driver DSNs (user@tcp(host)/db)"
		}
		return nil, notLinked(b, what)
	}
	return nil, &noDialectError{family: family}
}
