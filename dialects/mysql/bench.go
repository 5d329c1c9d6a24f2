package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// The Backend gives `schedlock bench` its raw baselines as methods, which
// the harness finds on the opened backend (the contract of package
// dialects/benchops, and benchkit.SessionBaseline): the raw GET_LOCK
// statements the session locker competes with, a count of the connections
// holding a set of GET_LOCK names by IS_USED_LOCK, which needs neither
// performance_schema nor a plugin, and the claim a developer writes by
// hand (claimbench.go).

// holderBatch is how many names one IS_USED_LOCK statement asks about.
const holderBatch = 500

// RawSessionOps returns the SessionOps of the session locker with the
// default (scoped) names: GET_LOCK(name, 0) and RELEASE_LOCK(name), one
// statement each.
func (b *Backend) RawSessionOps() sqlkit.SessionOps {
	return b.SessionOps(dialects.SessionNames{})
}

// CountHoldingSessions counts the distinct connection ids IS_USED_LOCK
// reports for LockName of names in b.Database, on conn.
func (b *Backend) CountHoldingSessions(ctx context.Context, conn *sql.Conn, names []string) (int, error) {
	ids := map[int64]bool{}
	for start := 0; start < len(names); start += holderBatch {
		batch := names[start:min(start+holderBatch, len(names))]
		args := make([]any, len(batch))
		for i, n := range batch {
			args[i] = LockName(b.Database, n)
		}
		rows, err := conn.QueryContext(ctx, holdingSessionsSQL(len(batch)), args...)
		if err != nil {
			return 0, dialects.Wrap(Name, "count lock holders", fmt.Errorf("IS_USED_LOCK: %w", err))
		}
		for rows.Next() {
			var id sql.NullInt64
			if err := rows.Scan(&id); err != nil {
				_ = rows.Close()
				return 0, dialects.Wrap(Name, "count lock holders", err)
			}
			if id.Valid {
				ids[id.Int64] = true
			}
		}
		if err := rows.Close(); err != nil {
			return 0, dialects.Wrap(Name, "count lock holders", err)
		}
		if err := rows.Err(); err != nil {
			return 0, dialects.Wrap(Name, "count lock holders", err)
		}
	}
	return len(ids), nil
}

// holdingSessionsSQL asks for the distinct holders of n names.
func holdingSessionsSQL(n int) string {
	return strings.Repeat("SELECT IS_USED_LOCK(?) UNION ", n-1) + "SELECT IS_USED_LOCK(?)"
}
