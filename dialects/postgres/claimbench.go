package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/schedlock/schedlock/dialects/benchops"
)

var _ benchops.ClaimWork = (*Backend)(nil)

// RawClaimTexts implements benchops.ClaimWork: the statements a developer
// writes on PostgreSQL — a CTE that locks the due rows FOR UPDATE SKIP
// LOCKED with a LIMIT, then UPDATE … FROM … RETURNING; a completion by id,
// owner and version; and a batch completion of arrays of ids and versions
// (unnest), one statement whatever the batch. The clock is now(), the
// statement's start in autocommit. They are written apart from
// ClaimBuilder, so that the engine is measured against SQL it did not
// produce.
func (b *Backend) RawClaimTexts(table string) benchops.ClaimTexts {
	r := strings.NewReplacer("NOW", "(now() AT TIME ZONE 'UTC')", "{T}", table)
	return benchops.ClaimTexts{
		Claim: r.Replace(`WITH picked AS (
  SELECT id FROM {T} WHERE (status = 'ready' AND due_at <= NOW) OR (status = 'claimed' AND claimed_until <= NOW)
  ORDER BY priority DESC, due_at, id LIMIT $1 FOR UPDATE SKIP LOCKED)
UPDATE {T} AS t SET status = 'claimed', owner = $2, claimed_until = NOW + $3::bigint * interval '1 millisecond', version = t.version + 1, updated_at = NOW
FROM picked WHERE t.id = picked.id RETURNING t.id, t.version, t.task_type, t.payload`),
		Complete: r.Replace(`UPDATE {T} SET status = 'done', claimed_until = NULL, version = version + 1, updated_at = NOW
WHERE id = $1 AND owner = $2 AND version = $3 AND status = 'claimed'`),
		CompleteBatch: r.Replace(`UPDATE {T} AS t SET status = 'done', claimed_until = NULL, version = t.version + 1, updated_at = NOW
FROM unnest($2::bigint[], $3::bigint[]) AS f(id, version)
WHERE t.id = f.id AND t.version = f.version AND t.owner = $1 AND t.status = 'claimed'`),
	}
}

// RawClaimWork implements benchops.ClaimWork: the statements of
// RawClaimTexts on conn's pgx connection itself (pgx.Conn, its statement
// cache; no database/sql on the way).
func (b *Backend) RawClaimWork(ctx context.Context, conn *sql.Conn, table string, lease time.Duration, run func(benchops.ClaimOps) error) error {
	t := b.RawClaimTexts(table)
	leaseMs := lease.Milliseconds()
	return conn.Raw(func(driverConn any) error {
		sc, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("raw claim work: the connection is a %T, not pgx's", driverConn)
		}
		pc := sc.Conn()
		return run(benchops.ClaimOps{
			Claim: func(ctx context.Context, owner string, batch int) ([]benchops.ClaimedRow, error) {
				rows, err := pc.Query(ctx, t.Claim, batch, owner, leaseMs)
				if err != nil {
					return nil, err
				}
				defer rows.Close()
				var out []benchops.ClaimedRow
				for rows.Next() {
					var r benchops.ClaimedRow
					var typ string
					var payload []byte
					if err := rows.Scan(&r.ID, &r.Version, &typ, &payload); err != nil {
						return nil, err
					}
					out = append(out, r)
				}
				return out, rows.Err()
			},
			Complete: func(ctx context.Context, owner string, r benchops.ClaimedRow) (bool, error) {
				tag, err := pc.Exec(ctx, t.Complete, r.ID, owner, r.Version)
				return err == nil && tag.RowsAffected() == 1, err
			},
			CompleteBatch: func(ctx context.Context, owner string, rows []benchops.ClaimedRow) (int64, error) {
				ids, versions := make([]int64, len(rows)), make([]int64, len(rows))
				for i, r := range rows {
					ids[i], versions[i] = r.ID, r.Version
				}
				tag, err := pc.Exec(ctx, t.CompleteBatch, owner, ids, versions)
				return tag.RowsAffected(), err
			},
		})
	})
}
