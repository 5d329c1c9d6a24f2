package postgres

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects/benchops"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

var _ benchops.ClaimBaseline = (*Backend)(nil)

// RawClaim implements benchops.ClaimBaseline: the single statement a
// developer writes on PostgreSQL — a CTE that locks the due rows FOR
// UPDATE SKIP LOCKED with a LIMIT, then UPDATE … FROM … RETURNING. It is
// written apart from ClaimBuilder, so that the engine is measured against
// SQL it did not produce.
func (b *Backend) RawClaim(table string, lease time.Duration) (func(ctx context.Context, db *sql.DB, owner string, batch int) (int, error), string) {
	text := strings.NewReplacer("NOW", "(clock_timestamp() AT TIME ZONE 'UTC')", "{T}", table).Replace(`WITH picked AS (
  SELECT id FROM {T} WHERE (status = 'ready' AND due_at <= NOW) OR (status = 'claimed' AND claimed_until <= NOW)
  ORDER BY priority DESC, due_at, id LIMIT $1::bigint FOR UPDATE SKIP LOCKED)
UPDATE {T} AS t SET status = 'claimed', owner = $2::text, claimed_until = NOW + $3::bigint * interval '1 millisecond', version = t.version + 1, updated_at = NOW
FROM picked WHERE t.id = picked.id RETURNING t.id, t.task_type, t.payload`)
	return sqlkit.StatementClaim(text, lease), text
}
