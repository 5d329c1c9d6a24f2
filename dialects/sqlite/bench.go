package sqlite

import (
	"strings"
	"time"

	"github.com/schedlock/schedlock/internal/benchkit"
)

func init() { benchkit.Register(Name, benchSupport{}) }

// benchSupport gives `schedlock bench --claims` the claim a developer
// writes on SQLite.
type benchSupport struct{}

var _ benchkit.RawClaimer = benchSupport{}

// RawClaim implements benchkit.RawClaimer: one UPDATE … WHERE id IN
// (SELECT … LIMIT) RETURNING (SQLite has no row locks to skip: a writer
// holds the whole database).
func (benchSupport) RawClaim(table string, lease time.Duration) (benchkit.RawClaim, string) {
	now := "strftime('%Y-%m-%d %H:%M:%f', 'now')"
	text := strings.NewReplacer("NOW", now, "{T}", table).Replace(`UPDATE {T} SET status = 'claimed', owner = ?2, claimed_until = strftime('%Y-%m-%d %H:%M:%f', 'now', (?3 / 1000.0) || ' seconds'), version = version + 1, updated_at = NOW
WHERE id IN (SELECT id FROM {T} WHERE (status = 'ready' AND due_at <= NOW) OR (status = 'claimed' AND claimed_until <= NOW)
  ORDER BY priority DESC, due_at, id LIMIT ?1) RETURNING id, task_type, payload`)
	return benchkit.StatementClaim(text, lease), text
}
