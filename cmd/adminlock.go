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
	name    string           // the stored name: NS::NAME in a namespace
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
	l := &oneLock{target: target, name: dialects.NamespacedName(ns, name)}
	if l.tables, err = adminTables(table, preset, target, command); err != nil {
		return nil, err
	}
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
