package sqlite

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
// writes on SQLite — one UPDATE … WHERE id IN (SELECT … LIMIT) RETURNING
// (SQLite has no row locks to skip: a writer holds the whole database), a
// completion by id, owner and version, and a batch completion of the pairs
// of ids and versions in one statement (CompleteBatch's text ends where
// its list begins).
func (b *Backend) RawClaimTexts(table string) benchops.ClaimTexts {
	r := strings.NewReplacer("NOW", "strftime('%Y-%m-%d %H:%M:%f', 'now')", "{T}", table)
	return benchops.ClaimTexts{
		Claim: r.Replace(`UPDATE {T} SET status = 'claimed', owner = ?2, claimed_until = strftime('%Y-%m-%d %H:%M:%f', 'now', (?3 / 1000.0) || ' seconds'), version = version + 1, updated_at = NOW
WHERE id IN (SELECT id FROM {T} WHERE (status = 'ready' AND due_at <= NOW) OR (status = 'claimed' AND claimed_until <= NOW)
  ORDER BY priority DESC, due_at, id LIMIT ?1) RETURNING id, version, task_type, payload`),
		Complete:      r.Replace(`UPDATE {T} SET status = 'done', claimed_until = NULL, version = version + 1, updated_at = NOW WHERE id = ?1 AND owner = ?2 AND version = ?3 AND status = 'claimed'`),
		CompleteBatch: r.Replace(`UPDATE {T} SET status = 'done', claimed_until = NULL, version = version + 1, updated_at = NOW WHERE owner = ?1 AND status = 'claimed' AND (`),
	}
}

// RawClaimWork implements benchops.ClaimWork on conn, the driver's
// connection to the database file.
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
				w.WriteString("(id = ?" + strconv.Itoa(2*i+2) + " AND version = ?" + strconv.Itoa(2*i+3) + ")")
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
