package sqlserver

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects/benchops"
)

var _ benchops.ClaimBaseline = (*Backend)(nil)

// RawClaim is the claim baseline of `schedlock bench --claims`
// (benchops.ClaimBaseline): the statement a developer writes on SQL
// Server — a CTE of TOP (n) … ORDER BY rows read WITH (UPDLOCK, READPAST,
// ROWLOCK), updated with OUTPUT inserted.* — as a function claiming up to
// batch rows of the default task table called table for lease, by owner,
// on db (returning how many it claimed), and its text for the report. It
// is written apart from ClaimBuilder, so that the engine is measured
// against SQL it did not produce.
func (b *Backend) RawClaim(table string, lease time.Duration) (claim func(ctx context.Context, db *sql.DB, owner string, batch int) (int, error), text string) {
	text = strings.NewReplacer("NOW", "SYSUTCDATETIME()", "{T}", table).Replace(`WITH picked AS (
  SELECT TOP (@p1) * FROM {T} WITH (UPDLOCK, READPAST, ROWLOCK)
  WHERE (status = 'ready' AND due_at <= NOW) OR (status = 'claimed' AND claimed_until <= NOW)
  ORDER BY priority DESC, due_at, id)
UPDATE picked SET status = 'claimed', owner = @p2, claimed_until = DATEADD(millisecond, @p3, NOW), version = version + 1, updated_at = NOW
OUTPUT inserted.id, inserted.task_type, inserted.payload;`)
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
