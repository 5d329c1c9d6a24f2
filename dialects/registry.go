package dialects

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"sync"
)

// Dialect is one database family's entry in the registry. Sub-packages
// register theirs in init; import dialects/all to get every one.
type Dialect struct {
	// Name is the family name: "postgres", "mysql", "sqlite", …
	Name string
	// Schemes are the dburl driver names (u.UnaliasedDriver) it claims.
	Schemes []string
	// Driver is the database/sql driver name to open with.
	Driver string
	// Detect identifies the product behind db. It runs once per process per
	// DB (see Open).
	Detect func(ctx context.Context, db *sql.DB) (Info, error)
	// NewSessionLocker returns the session-strategy locker, or an error
	// matching ErrUnsupported with the reason.
	NewSessionLocker func(db *sql.DB, info Info) (Locker, error)
	// NewTableLocker returns the table-strategy locker for table t.
	NewTableLocker func(db *sql.DB, info Info, t Table) (TableLocker, error)
	// Recommend picks the lock strategy for info and says why.
	Recommend func(info Info) (Strategy, string)
	// NewLockAdmin returns what `locks ls` and `unlock` need beyond the
	// lockers: lock-table discovery, the server's session-lock views and
	// session termination. Nil when the dialect has none; table locks are
	// then still listed, with tables found by probing (see DB.LockTables).
	NewLockAdmin func(db *sql.DB, info Info) LockAdmin
	// Probe finds out what the database can do (see ProbeFunc and
	// DB.Probe). Nil when the dialect has no probe.
	Probe ProbeFunc
}

var (
	registryMu sync.RWMutex
	registry   = map[string]*Dialect{}
)

// Register adds d to the registry. It panics on a nil dialect, an empty name
// or a duplicate, like database/sql.Register.
func Register(d *Dialect) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if d == nil || d.Name == "" {
		panic("dialects: Register of a nil or unnamed dialect")
	}
	if _, dup := registry[d.Name]; dup {
		panic("dialects: Register called twice for " + d.Name)
	}
	registry[d.Name] = d
}

// Lookup returns the dialect registered under name.
func Lookup(name string) (*Dialect, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	d, ok := registry[name]
	return d, ok
}

// ForScheme returns the dialect that claims a dburl driver name.
func ForScheme(scheme string) (*Dialect, error) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	for _, d := range registry {
		for _, s := range d.Schemes {
			if s == scheme {
				return d, nil
			}
		}
	}
	return nil, fmt.Errorf("%w: no dialect for %q (registered: %v)", ErrUnsupported, scheme, namesLocked())
}

// Names lists the registered dialect names, sorted.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return namesLocked()
}

func namesLocked() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
