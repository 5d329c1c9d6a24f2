package dsn

import (
	"sort"

	"github.com/xo/dburl"
)

// Database families schedlock knows, as the DSN's Family.
const (
	FamilyPostgres  = "postgres"
	FamilyMySQL     = "mysql"
	FamilySQLite    = "sqlite"
	FamilyOracle    = "oracle"
	FamilySQLServer = "sqlserver"
	FamilyDameng    = "dm"
)

// families maps a dburl scheme name (URL.SchemeName, aliases resolved) to
// the database family whose dialect handles it.
var families = map[string]string{
	"postgres":      FamilyPostgres,
	"pgx":           FamilyPostgres,
	"pq":            FamilyPostgres,
	"cockroachdb":   FamilyPostgres,
	"kingbase":      FamilyPostgres,
	"mysql":         FamilyMySQL,
	"tidb":          FamilyMySQL,
	"sqlite3":       FamilySQLite,
	"moderncsqlite": FamilySQLite,
	"oracle":        FamilyOracle,
	"sqlserver":     FamilySQLServer,
	"dm":            FamilyDameng,
}

// defaultPorts are the ports the drivers dial when the DSN names none.
var defaultPorts = map[string]string{
	"postgres": "5432", "pgx": "5432", "pq": "5432", "cockroachdb": "26257", "kingbase": "54321",
	"mysql": "3306", "tidb": "4000", "oracle": "1521", "sqlserver": "1433", "dm": "5236",
}

// supportedSchemes is the list shown when a scheme is unknown.
const supportedSchemes = "postgres://, postgresql://, pgx://, kingbase://, mysql://, mariadb://, sqlite:PATH (or a bare *.db path), oracle://, sqlserver://, dm://"

// init registers the schemes dburl does not know. dburl.Register only adds
// entries, so every scheme dburl already had keeps working; a scheme that is
// already registered (by a newer dburl) is left as it is.
func init() {
	if dburl.Protocols("kingbase") == nil {
		// KingbaseES speaks the PostgreSQL wire protocol; its default port
		// is 54321.
		dburl.Register(dburl.Scheme{
			Name:      "kingbase",
			Generator: dburl.GenPgxFromURL("postgres://localhost:54321/"),
			Transport: dburl.TransportUnix,
			Aliases:   []string{"kb", "kingbasees"},
			Dialect:   "kingbase",
			Desc:      "KingbaseES",
			GoPackage: "github.com/jackc/pgx/v5/stdlib",
		})
	}
	if dburl.Protocols("dm") == nil {
		// Dameng DM8: the driver (database/sql name "dm") reads the URL
		// dm://user:pass@host:5236?schema=S as it is.
		dburl.Register(dburl.Scheme{
			Name:      "dm",
			Generator: dburl.GenFromURL("dm://localhost:5236/"),
			Aliases:   []string{"dameng"},
			Dialect:   "dm",
			Desc:      "Dameng DM8",
		})
	}
}

// Families lists the database families schedlock can parse DSNs for.
func Families() []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range families {
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}
