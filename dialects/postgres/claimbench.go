package postgres

import (
	"strings"
	"time"

	"github.com/schedlock/schedlock/internal/benchkit"
)

var _ benchkit.RawClaimer = benchSupport{}

// RawClaim implements benchkit.RawClaimer: the single statement a
// developer writes on PostgreSQL — a CTE that locks the due rows FOR
// UPDATE SKIP LOCKED with a LIMIT, then UPDATE … FROM … RETURNING.
func (benchSupport) RawClaim(table string, lease time.Duration) (benchkit.RawClaim, string) {
	text := strings.NewReplacer("NOW", "(clock_timestamp() AT TIME ZONE 'UTC')", "{T}", table).Replace(`WITH picked AS (
  SELECT id FROM {T} WHERE (status = 'ready' AND due_at <= NOW) OR (status = 'claimed' AND claimed_until <= NOW)
  ORDER BY priority DESC, due_at, id LIMIT $1::bigint FOR UPDATE SKIP LOCKED)
UPDATE {T} AS t SET status = 'claimed', owner = $2::text, claimed_until = NOW + $3::bigint * interval '1 millisecond', version = t.version + 1, updated_at = NOW
FROM picked WHERE t.id = picked.id RETURNING t.id, t.task_type, t.payload`)
	return benchkit.StatementClaim(text, lease), text
}
