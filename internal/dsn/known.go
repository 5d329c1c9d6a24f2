package dsn

import (
	"fmt"
	"strings"

	"github.com/schedlock/schedlock/dialects"
)

// backendsPath is the import path under which this module's backends live.
const backendsPath = "github.com/schedlock/schedlock/dialects/"

// knownBackend is a backend this module provides, with every way its DSNs
// are written. A program links only the backends it imports, so a DSN of
// one it did not import is told apart from a DSN nobody can open: it is
// refused with the import to add.
type knownBackend struct {
	// name is its registry name (dialects.Dialect.Name); its package is
	// backendsPath + name.
	name string
	// schemes are the URL schemes that mean it, as written: the dburl
	// scheme names of its entry and every alias, those the backend itself
	// registers with dburl included (with it missing, dburl does not know
	// them).
	schemes []string
	// exts are the file extensions of a bare path that mean it.
	exts []string
}

// knownBackends are the backends of dialects/all. TestKnownBackends checks
// the table against what dialects/all registers, so it cannot drift.
var knownBackends = []knownBackend{
	{name: "postgres", schemes: []string{
		"postgres", "pg", "pgsql", "postgresql", "pgx", "px", "pq", "libpq",
		"cockroachdb", "cr", "cdb", "crdb", "cockroach", "kingbase", "kb", "kingbasees",
	}},
	{name: "mysql", schemes: []string{"mysql", "my", "maria", "aurora", "percona", "mariadb", "tidb", "ti"}},
	{name: "sqlite", schemes: []string{"sqlite3", "sq", "sqlite", "moderncsqlite", "mq", "modernsqlite", "file", "fi"},
		exts: []string{".db", ".sqlite", ".sqlite3", ".db3"}},
	{name: "oracle", schemes: []string{"oracle", "or", "oci", "ora", "odpi", "oci8", "odpi-c"}},
	{name: "sqlserver", schemes: []string{"sqlserver", "ms", "mssql", "azuresql"}},
	{name: "dameng", schemes: []string{"dm", "dameng"}},
	{name: "redis", schemes: []string{"redis", "rd", "rediss", "rt"}},
	{name: "etcd", schemes: []string{"etcd", "et", "etcds"}},
	{name: "zookeeper", schemes: []string{"zk", "zookeeper"}},
	{name: "nats", schemes: []string{"nats", "na", "tls"}},
	{name: "mongodb", schemes: []string{"mongodb", "mo", "mongodb+srv", "mongo"}},
	{name: "dynamodb", schemes: []string{"dynamodb", "dy", "dyn", "dynamo"}},
	{name: "kubernetes", schemes: []string{"kubernetes", "k8s", "k", "k8", "kc", "kube"}},
	{name: "memory", schemes: []string{"memory", "mm"}},
}

// importPath is the package a program imports to link b.
func (b knownBackend) importPath() string { return backendsPath + b.name }

// knownByScheme returns the known backend a URL scheme (as written, or as
// dburl resolved it) means.
func knownByScheme(schemes ...string) (knownBackend, bool) {
	for _, s := range schemes {
		s = strings.ToLower(s)
		for _, b := range knownBackends {
			for _, bs := range b.schemes {
				if s != "" && s == bs {
					return b, true
				}
			}
		}
	}
	return knownBackend{}, false
}

// knownByExtension returns the known backend of a file extension (".db").
func knownByExtension(ext string) (knownBackend, bool) {
	for _, b := range knownBackends {
		for _, e := range b.exts {
			if e == ext {
				return b, true
			}
		}
	}
	return knownBackend{}, false
}

// knownByName returns the known backend called name.
func knownByName(name string) (knownBackend, bool) {
	for _, b := range knownBackends {
		if b.name == name {
			return b, true
		}
	}
	return knownBackend{}, false
}

// linked reports whether the program registered the backend called name.
func linked(name string) bool {
	_, ok := dialects.Lookup(name)
	return ok
}

// NotLinkedError refuses a DSN of a backend this module provides that the
// program does not link: it names the import to add. It matches
// dialects.ErrUnsupported.
type NotLinkedError struct {
	// What is what the DSN was recognised by: "redis://", "postgres
	// key=value DSNs", ".db files".
	What string
	// Import is the package to import for its side effect.
	Import string
}

func (e *NotLinkedError) Error() string {
	return fmt.Sprintf("no backend linked for %s: add import _ %q", e.What, e.Import)
}

// Is makes errors.Is(err, dialects.ErrUnsupported) true.
func (e *NotLinkedError) Is(target error) bool { return target == dialects.ErrUnsupported }

// notLinked returns the refusal of a DSN of the known backend b, or nil
// when b is linked after all (the scheme failed for another reason).
func notLinked(b knownBackend, what string) error {
	if linked(b.name) {
		return nil
	}
	return &NotLinkedError{What: what, Import: b.importPath()}
}
