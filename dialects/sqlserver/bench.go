package sqlserver

import (
	"strings"
	"time"

	"github.com/schedlock/schedlock/internal/benchkit"
)

func init() { benchkit.Register(Name, benchSupport{}) }

// benchSupport gives `schedlock bench --claims` the claim a developer
// writes on SQL Server.
type benchSupport struct{}

var _ benchkit.RawClaimer = benchSupport{}

// RawClaim implements benchkit.RawClaimer: a CTE of TOP (n) … ORDER BY
// rows read WITH (UPDLOCK, READPAST, ROWLOCK), updated with OUTPUT
// inserted.*.
func (benchSupport) RawClaim(table string, lease time.Duration) (benchkit.RawClaim, string) {
	text := strings.NewReplacer("NOW", "SYSUTCDATETIME()", "{T}", table).Replace(`WITH picked AS (
  SELECT TOP (@p1) * FROM {T} WITH (UPDLOCK, READPAST, ROWLOCK)
  WHERE (status = 'ready' AND due_at <= NOW) OR (status = 'claimed' AND claimed_until <= NOW)
  ORDER BY priority DESC, due_at, id)
UPDATE picked SET status = 'claimed', owner = @p2, claimed_until = DATEADD(millisecond, @p3, NOW), version = version + 1, updated_at = NOW
OUTPUT inserted.id, inserted.task_type, inserted.payload;`)
	return benchkit.StatementClaim(text, lease), text
}
