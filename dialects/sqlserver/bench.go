package sqlserver

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects/benchops"
)

var _ benchops.ClaimWork = (*Backend)(nil)

// RawClaimTexts implements benchops.ClaimWork: the claim work a developer
// writes on SQL Server — a CTE of TOP (n) … ORDER BY rows read WITH
// (UPDLOCK, READPAST, ROWLOCK), updated with OUTPUT inserted.*; a
// completion by id, owner and version; a batch completion of the pairs of
// ids and versions in one statement (its text ends where its list
// begins). They are written apart from ClaimBuilder, so that the engine
// is measured against SQL it did not produce.
func (b *Backend) RawClaimTexts(table string) benchops.ClaimTexts {
	r := strings.NewReplacer("NOW", "SYSUTCDATETIME()", "{T}", table)
	return benchops.ClaimTexts{
		Claim: r.Replace(`WITH picked AS (
  SELECT TOP (@p1) * FROM {T} WITH (UPDLOCK, READPAST, ROWLOCK)
  WHERE (status = 'ready' AND due_at <= NOW) OR (status = 'claimed' AND claimed_until <= NOW)
  ORDER BY priority DESC, due_at, id)
UPDATE picked SET status = 'claimed', owner = @p2, claimed_until = DATEADD(millisecond, @p3, NOW), version = version + 1, updated_at = NOW
OUTPUT inserted.id, inserted.version, inserted.task_type, inserted.payload;`),
		Complete:      r.Replace(`UPDATE {T} SET status = 'done', claimed_until = NULL, version = version + 1, updated_at = NOW WHERE id = @p1 AND owner = @p2 AND version = @p3 AND status = 'claimed'`),
		CompleteBatch: r.Replace(`UPDATE {T} SET status = 'done', claimed_until = NULL, version = version + 1, updated_at = NOW WHERE owner = @p1 AND status = 'claimed' AND (`),
	}
}

// RawClaimWork implements benchops.ClaimWork on conn, go-mssqldb's
// connection.
func (b *Backend) RawClaimWork(ctx context.Context, conn *sql.Conn, table string, lease time.Duration, run func(benchops.ClaimOps) error) error {
	t := b.RawClaimTexts(table)
	leaseMs := lease.Milliseconds()
	return run(benchops.ClaimOps{
		Claim: func(ctx context.Context, owner string, n int) ([]benchops.ClaimedRow, error) {
			rows, err := conn.QueryContext(ctx, t.Claim, n, owner, leaseMs)
			if err != nil {
				return nil, err
			}
			defer rows.Close()
			var out []benchops.ClaimedRow
			for rows.Next() {
				var c benchops.ClaimedRow
				var typ string
				var payload []byte
				if err := rows.Scan(&c.ID, &c.Version, &typ, &payload); err != nil {
					return nil, err
				}
				out = append(out, c)
			}
			return out, rows.Err()
		},
		Complete: func(ctx context.Context, owner string, c benchops.ClaimedRow) (bool, error) {
			res, err := conn.ExecContext(ctx, t.Complete, c.ID, owner, c.Version)
			if err != nil {
				return false, err
			}
			n, err := res.RowsAffected()
			return n == 1, err
		},
		CompleteBatch: func(ctx context.Context, owner string, rows []benchops.ClaimedRow) (int64, error) {
			var w strings.Builder
			w.WriteString(t.CompleteBatch)
			args := make([]any, 0, 1+2*len(rows))
			args = append(args, owner)
			for i, c := range rows {
				if i > 0 {
					w.WriteString(" OR ")
				}
				w.WriteString("(id = @p" + strconv.Itoa(2*i+2) + " AND version = @p" + strconv.Itoa(2*i+3) + ")")
				args = append(args, c.ID, c.Version)
			}
			res, err := conn.ExecContext(ctx, w.String()+")", args...)
			if err != nil {
				return 0, err
			}
			return res.RowsAffected()
		},
	})
}
