package cmd

import (
	"context"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/dsn"
)

// oneLock is the lock an administrative command acts on (unlock, pause,
// resume), read before anything changes.
type oneLock struct {
	target  *dsn.DSN
	name    string           // the stored name: NS::NAME in a namespace (NAME where the table keeps it)
	given   string           // the name as given, NAME
	ns      string           // the command's namespace, "" for none
	placed  bool             // the given table keeps the namespace (ShedLock's Redis environment)
	zone    string           // the tables' writer time zone ("": none)
	tables  []dialects.Table // --table/--preset (nil: the known ones)
	backend dialects.Backend // open: the caller closes it
	db      dialects.LockBreaker
	found   *dialects.Listing
}

// findOneLock resolves command's DSN, namespace and tables (zoned: with
// the writer time zone of --table-time-zone or x-time-zone), connects,
// and reads lock name wherever it may live. Errors are the command's:
// bad input is a usage error.
func findOneLock(ctx context.Context, f *Factory, g *GlobalOptions, command, name, table, preset string, zoned bool, names sessionNameFlags) (*oneLock, error) {
	target, err := resolveAdminDSN(f, g, command)
	if err != nil {
		return nil, err
	}
	ns, err := g.namespace(command, target)
	if err != nil {
		return nil, err
	}
	if err := names.apply(target, ns, command); err != nil {
		return nil, err
	}
	tables, err := adminTables(table, preset, target, command)
	if err != nil {
		return nil, err
	}
	// On ShedLock's Redis layout the namespace is the environment: the
	// table's, not the name's.
	tables, nameNS, err := adminNamespace(command, target, tables, ns)
	if err != nil {
		return nil, err
	}
	l := &oneLock{target: target, name: dialects.NamespacedName(nameNS, name), given: name, ns: ns, placed: nameNS != ns, tables: tables}
	if zoned {
		if l.zone, err = g.tableTimeZone(command, target); err != nil {
			return nil, err
		}
		l.tables = zonedTables(l.tables, l.zone)
	}
	if l.backend, err = connectAdmin(ctx, target, command); err != nil {
		return nil, err
	}
	if err := checkSessionNamesConnected(l.backend, target, command); err != nil {
		l.backend.Close()
		return nil, err
	}
	if l.db, err = lockBreaker(l.backend); err == nil {
		l.found, err = l.db.FindLock(ctx, l.name, l.tables)
	}
	if err != nil {
		l.backend.Close()
		return nil, adminError(err, target, command)
	}
	return l, nil
}

// nameIn is the name lock e has in its own table: stored, the name the
// command looked up, unless e's table keeps the namespace itself — the
// backend set e.Namespace (ShedLock's Redis environment) — where it is
// e's Name. e is as FindLock read it.
func nameIn(e dialects.LockEntry, stored string) string {
	if e.Namespace != "" && e.Name != "" {
		return e.Name
	}
	return stored
}

// inTable is the table t and the lock's name in it for a lock with no row
// yet, placed in t by no table of the command's own: where t keeps a
// namespace itself (ShedLock's Redis environment), the command's
// namespace goes there, as run would put it (an environment t names
// otherwise is refused); elsewhere the stored name.
func (l *oneLock) inTable(command string, t dialects.Table) (dialects.Table, string, error) {
	if l.placed || l.ns == "" {
		return t, l.name, nil
	}
	placed, rest, err := placeNamespace(command, l.target, t, l.ns)
	if err != nil || rest != "" {
		return t, l.name, err
	}
	return placed, l.given, nil
}
