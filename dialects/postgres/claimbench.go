package postgres

import (
	"context"
	"database/sql"
	"strings"
	"time"
)

// RawClaim is the claim baseline of `schedlock bench --claims`: the
// single statement a developer writes on PostgreSQL — a CTE that locks
// the due rows FOR UPDATE SKIP LOCKED with a LIMIT, then UPDATE … FROM …
// RETURNING — as a function claiming up to batch rows of the default task
// table called table for lease, by owner, on db (returning how many it
// claimed), and its text for the report. It is written apart from
// ClaimBuilder, so that the engine is measured against SQL it did not
// produce.
func (b *Backend) RawClaim(table string, lease time.Duration) (claim func(ctx context.Context, db *sql.DB, owner string, batch int) (int, error), text string) {
	text = strings.NewReplacer("NOW", "(clock_timestamp() AT TIME ZONE 'UTC')", "{T}", table).Replace(`WITH picked AS (
  SELECT id FROM {T} WHERE (status = 'ready' AND due_at <= NOW) OR (status = 'claimed' AND claimed_until <= NOW)
  ORDER BY priority DESC, due_at, id LIMIT $1::bigint FOR UPDATE SKIP LOCKED)
UPDATE {T} AS t SET status = 'claimed', owner = $2::text, claimed_until = NOW + $3::bigint * interval '1 millisecond', version = t.version + 1, updated_at = NOW
FROM picked WHERE t.id = picked.id RETURNING t.id, t.task_type, t.payload`)
	leaseMs := lease.Milliseconds()
	claim = func(ctx context.Context, db *sql.DB, owner string, batch int) (int, error) {
		rows, err := db.QueryContext(ctx, text, batch, owner, leaseMs)
		if err != nil {
			return 0, err
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var id int64
			var typ string
			var payload []byte
			if err := rows.Scan(&id, &typ, &payload); err != nil {
				return n, err
			}
			n++
		}
		return n, rows.Err()
	}
	return claim, text
}
