package sqlite

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects/benchops"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

var _ benchops.ClaimBaseline = (*Backend)(nil)

// RawClaim implements benchops.ClaimBaseline: the claim a developer
// writes on SQLite, one UPDATE … WHERE id IN (SELECT … LIMIT) RETURNING
// (SQLite has no row locks to skip: a writer holds the whole database).
func (b *Backend) RawClaim(table string, lease time.Duration) (func(ctx context.Context, db *sql.DB, owner string, batch int) (int, error), string) {
	now := "strftime('%Y-%m-%d %H:%M:%f', 'now')"
	text := strings.NewReplacer("NOW", now, "{T}", table).Replace(`UPDATE {T} SET status = 'claimed', owner = ?2, claimed_until = strftime('%Y-%m-%d %H:%M:%f', 'now', (?3 / 1000.0) || ' seconds'), version = version + 1, updated_at = NOW
WHERE id IN (SELECT id FROM {T} WHERE (status = 'ready' AND due_at <= NOW) OR (status = 'claimed' AND claimed_until <= NOW)
  ORDER BY priority DESC, due_at, id LIMIT ?1) RETURNING id, task_type, payload`)
	return sqlkit.StatementClaim(text, lease), text
}
