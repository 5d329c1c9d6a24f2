package dialects

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/xo/dburl"
)

// Dialect is one backend's entry in the registry: everything the DSN
// parser, the command line and Open need to know about one database
// family. Sub-packages register theirs in init; import dialects/all to get
// every one (see the package doc for the checklist of a new backend).
//
// A backend over database/sql fills Driver and the SQL hooks (Detect,
// NewSessionLocker, …) and leaves Open nil: the kit opens it as a *DB. Any
// other backend (an in-memory one, a key-value store) sets Open and needs
// none of the SQL hooks.
type Dialect struct {
	// Name is the family name: "postgres", "mysql", "sqlite", …
	Name string
	// Title is the family's display name: "PostgreSQL", "MySQL", …
	Title string
	// Schemes are the URL schemes it claims, by their dburl scheme name
	// (aliases resolved: postgresql:// is "postgres", mariadb:// "mysql"),
	// with the port the driver dials when the DSN names none.
	Schemes []Scheme
	// Forms is how its DSNs are written, for the message that lists the
	// supported schemes: "postgres://, postgresql://, pgx://".
	Forms string
	// Starts are how its DSNs begin, as shell completion offers them for
	// --dsn: {"postgres://", "postgresql://"}; sqlite: for a file.
	Starts []string
	// Support are the backend's rows of the support table (docs/dialects.md,
	// `schedlock detect`): one per product and variant it speaks. A row's
	// Dialect may be left empty: it is Name.
	Support []ProductSupport
	// Products are the display names of the products detection reports
	// (Info.Product → "MariaDB"); a product without one is shown as is.
	Products map[string]string
	// Files is set for a database kept in a local file (SQLite).
	Files *FileDatabase
	// DriverQuery rewrites the driver parameters of a DSN's query before the
	// connection string is built (MySQL forces multiStatements=false and
	// adds interpolateParams=true). Nil keeps the query as written.
	DriverQuery func(query string) string
	// ConnString builds the driver's connection string from a URL DSN whose
	// x- options are removed and whose query went through DriverQuery. Nil
	// takes dburl's (u.DSN).
	ConnString func(u *dburl.URL) (string, error)
	// CheckConn reads the driver's connection string (a URL's, as
	// ConnString built it, or a key=value one) as the driver will, so a
	// value the driver refuses is a bad DSN before any dial. Its errors
	// must not quote the password. Nil: the driver's parse is left to the
	// dial.
	CheckConn func(conn string) error
	// Where names, for messages, the server a URL DSN's connection string
	// reaches when the URL alone does not say (PostgreSQL's postgres:///DB
	// reaches the default socket), or "": the URL's host and port. Nil:
	// always the URL's.
	Where func(conn string) string
	// NameConnections returns conn — the driver's connection string, as
	// ConnString and DriverQuery built it — with its connections named app
	// in the server's own session views (PostgreSQL application_name,
	// the MySQL/MariaDB program_name connection attribute, SQL Server app
	// name, Oracle's program), unless conn names them already: a name the
	// user wrote in the DSN wins. The caller chooses app ("schedlock run
	// nightly-report"); a backend never makes one up, but cuts it to what
	// its server keeps (CutAppName), since app may hold a lock name of any
	// length. Nil: the backend's connections carry no name.
	NameConnections func(conn, app string) string
	// ConnectHint says what to check when connecting failed with err (a
	// wrong password, a missing database), or "" when it knows nothing
	// better than the generic hints (refused, timed out, unknown host).
	ConnectHint func(err error) string
	// MissingDriverHint is the fix when the build lacks the driver (a
	// driver behind a build tag); empty when every build has it.
	MissingDriverHint string
	// NamespaceTable keeps a namespace in the table's own layout where the
	// layout has a place for one (Redis: ShedLock's environment,
	// job-lock:ENV:NAME): given the table t a lock would be taken or
	// looked up in (as the backend reads it) and a namespace ns (not empty,
	// CheckNamespace'd), it returns the table that holds ns's locks and
	// true; their lock names then carry no namespace. false keeps ns in
	// the lock names (NamespacedName), as every other layout does. An
	// error matching ErrInvalid refuses the pair. Nil: never. See
	// PlaceNamespace.
	NamespaceTable func(t Table, ns string) (Table, bool, error)
	// CheckSessionNames checks that this backend can name its session
	// locks as n asks (x-session-names, x-session-key; see SessionNames),
	// errors matching ErrUnsupported or ErrInvalid. info is nil before
	// detection: only what the backend alone decides is checked then; the
	// kit checks again with what detection found before it gives the
	// names to the backend's session locker and lock administration. Nil:
	// scoped names only.
	CheckSessionNames func(n SessionNames, info *Info) error
	// Open opens the backend on a parsed DSN: its connections, detection
	// and the backend's own type (a SQL backend's through sqlkit.Open).
	Open func(ctx context.Context, t Target) (Backend, error)
}

// Scheme is one URL scheme a backend claims.
type Scheme struct {
	// Name is the dburl scheme name, aliases resolved.
	Name string
	// DefaultPort is the port dialled when the DSN names none; empty for
	// schemes without a network address.
	DefaultPort string
	// URL is how dburl parses this scheme's URLs where dburl itself does
	// not know the scheme (kingbase://, redis://, zk://, …): Register adds
	// it to dburl's table unless dburl already has an entry of that name.
	// Nil for the schemes dburl knows.
	URL *dburl.Scheme
}

// FileDatabase describes a backend whose database is a local file.
type FileDatabase struct {
	// Extensions name such a file in a bare path: ".db", ".sqlite", …
	Extensions []string
	// Hint is what to check when the file does not open.
	Hint string
	// Conn builds the driver's connection string from the path and its
	// query ("locks.db?_pragma=…"); nil keeps them as given.
	Conn func(pathAndQuery string) string
}

// ProductTitle returns the display name of product (Info.Product) from the
// entry that registered it, or "" when no entry names it.
func ProductTitle(product string) string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	for _, d := range registry {
		if t := d.Products[product]; t != "" {
			return t
		}
	}
	return ""
}

var (
	registryMu sync.RWMutex
	registry   = map[string]*Dialect{}
)

// Register adds d to the registry. It panics on a nil dialect, an empty name,
// or an entry that can open nothing (neither Open nor Detect): mistakes in
// the backend's own code that any test of it finds. A name or scheme
// another linked package already registered is no panic: the first entry
// stays, and ForScheme refuses the schemes of both with one line naming
// the two packages (see conflict).
func Register(d *Dialect) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if d == nil || d.Name == "" {
		panic("dialects: Register of a nil or unnamed dialect")
	}
	by := callerPackage()
	if kept, dup := registry[d.Name]; dup {
		recordConflictLocked(d, kept, "", by)
		return
	}
	if d.Open == nil {
		panic("dialects: " + d.Name + " has no Open")
	}
	for _, sc := range d.Schemes {
		if sc.URL != nil && dburl.Protocols(sc.URL.Name) == nil {
			dburl.Register(*sc.URL)
		}
	}
	if err := checkSupport(d); err != nil {
		panic("dialects: " + err.Error())
	}
	for _, s := range d.Schemes {
		if other := forSchemeLocked(s.Name); other != nil {
			recordConflictLocked(d, other, s.Name, by)
			return
		}
	}
	registry[d.Name] = d
	registeredBy[d.Name] = by
}

// Lookup returns the dialect registered under name.
func Lookup(name string) (*Dialect, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	d, ok := registry[name]
	return d, ok
}

// ForScheme returns the dialect that claims a dburl scheme name and that
// scheme. A scheme two linked packages claim is an error naming both.
func ForScheme(scheme string) (*Dialect, Scheme, error) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	if err := conflictLocked(scheme); err != nil {
		return nil, Scheme{}, err
	}
	if d := forSchemeLocked(scheme); d != nil {
		for _, s := range d.Schemes {
			if s.Name == scheme {
				return d, s, nil
			}
		}
	}
	return nil, Scheme{}, fmt.Errorf("%w: no dialect for %q (registered: %v)", ErrUnsupported, scheme, namesLocked())
}

func forSchemeLocked(scheme string) *Dialect {
	for _, d := range registry {
		for _, s := range d.Schemes {
			if s.Name == scheme {
				return d
			}
		}
	}
	return nil
}

// ForFileExtension returns the file-database dialect that claims the file
// name extension ext (".db"), if any.
func ForFileExtension(ext string) (*Dialect, bool) {
	for _, d := range Dialects() {
		if d.Files == nil {
			continue
		}
		for _, e := range d.Files.Extensions {
			if e == ext {
				return d, true
			}
		}
	}
	return nil, false
}

// FileDialect returns the first registered file-database dialect (in
// Dialects order), if any.
func FileDialect() (*Dialect, bool) {
	for _, d := range Dialects() {
		if d.Files != nil {
			return d, true
		}
	}
	return nil, false
}

// Names lists the registered dialect names, sorted.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return namesLocked()
}

// Dialects lists the registered dialects in the documentation order of
// the support table, then the others by name.
func Dialects() []*Dialect {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]*Dialect, 0, len(registry))
	for _, n := range namesLocked() {
		out = append(out, registry[n])
	}
	sort.SliceStable(out, func(i, j int) bool { return familyRank(out[i].Name) < familyRank(out[j].Name) })
	return out
}

func familyRank(name string) int {
	for i, f := range familyOrder {
		if f == name {
			return i
		}
	}
	return len(familyOrder)
}

func namesLocked() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
