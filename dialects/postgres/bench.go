package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/benchops"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

var _ benchops.HoldingCounter = (*Backend)(nil)

// The Backend gives `schedlock bench` its raw baselines as methods, which
// the harness finds on the opened backend (the contract of package
// dialects/benchops, and benchkit.SessionBaseline): the raw advisory-lock
// statements the session locker competes with, a count of the backends
// holding a set of advisory locks from pg_locks, and the claim a
// developer writes by hand (claimbench.go).

// RawSessionOps returns SessionOps on the catalog detection found:
// pg_try_advisory_lock and pg_advisory_unlock (or their sys_ names), one
// statement each, on scoped names.
func (b *Backend) RawSessionOps() sqlkit.SessionOps {
	c := b.catalog()
	return SessionOps{Catalog: &c}
}

// CountHoldingSessions counts the distinct backend pids holding a granted
// advisory lock on Key(name) of any of names in the current database, in
// the catalog detection found, on conn (a connection taken before the
// locks, so the count works when they use up the connection limit).
func (b *Backend) CountHoldingSessions(ctx context.Context, conn *sql.Conn, names []string) (int, error) {
	c := b.catalog()
	classids := make([]int64, len(names))
	objids := make([]int64, len(names))
	for i, n := range names {
		hi, lo := KeyParts(Key(n))
		classids[i], objids[i] = int64(hi), int64(lo)
	}
	var count int
	err := conn.QueryRowContext(ctx, c.holdingSessionsSQL(), classids, objids).Scan(&count)
	if err != nil {
		return 0, dialects.Wrap(Name, "count lock holders", fmt.Errorf("read %s: %w", c.Locks, err))
	}
	return count, nil
}

// holdingSessionsSQL counts the backends holding any of the bigint keys
// given as two arrays of their halves (see holdsSQL for the key layout).
func (c Catalog) holdingSessionsSQL() string {
	return "SELECT count(DISTINCT l.pid) FROM " + c.Locks + " l\n" +
		"JOIN unnest($1::bigint[], $2::bigint[]) AS k(classid, objid) ON l.classid::bigint = k.classid AND l.objid::bigint = k.objid\n" +
		"WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted\n" +
		"AND l.database = (SELECT oid FROM " + c.Database + " WHERE datname = current_database())"
}
