package mysql

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects/benchops"
)

var _ benchops.ClaimWork = (*Backend)(nil)

// RawClaimTexts implements benchops.ClaimWork: the claim work a developer
// writes on MySQL and MariaDB, which have no UPDATE … RETURNING: the claim
// as one READ COMMITTED transaction (under REPEATABLE READ the locking read
// takes gap locks that block the other workers) that locks the due rows
// SKIP LOCKED, reads what a worker needs, and updates them by id; a
// completion by id, owner and version; a batch completion of the pairs of
// ids and versions in one statement. A single UPDATE … ORDER BY … LIMIT
// would neither skip the rows other workers hold nor return the rows it
// claimed, so it is no claim to compare with. Complete's and
// CompleteBatch's texts end where their lists begin.
func (b *Backend) RawClaimTexts(table string) benchops.ClaimTexts {
	r := strings.NewReplacer("NOW", "UTC_TIMESTAMP(3)", "{T}", table)
	return benchops.ClaimTexts{
		Claim: r.Replace(`SELECT id, version, task_type, payload FROM {T}
WHERE (status = 'ready' AND due_at <= NOW) OR (status = 'claimed' AND claimed_until <= NOW)
ORDER BY priority DESC, due_at, id LIMIT ? FOR UPDATE SKIP LOCKED`) + "; " + r.Replace(rawClaimUpdate) + "…)",
		Complete:      r.Replace(rawComplete),
		CompleteBatch: r.Replace(rawCompleteBatch) + "(id = ? AND version = ?) OR …)",
	}
}

const (
	rawClaimUpdate   = `UPDATE {T} SET status = 'claimed', owner = ?, claimed_until = TIMESTAMPADD(MICROSECOND, ? * 1000, NOW), version = version + 1, updated_at = NOW WHERE id IN (`
	rawComplete      = `UPDATE {T} SET status = 'done', claimed_until = NULL, version = version + 1, updated_at = NOW WHERE id = ? AND owner = ? AND version = ? AND status = 'claimed'`
	rawCompleteBatch = `UPDATE {T} SET status = 'done', claimed_until = NULL, version = version + 1, updated_at = NOW WHERE owner = ? AND status = 'claimed' AND (`
)

// RawClaimWork implements benchops.ClaimWork on conn, go-sql-driver's
// connection with the backend's settings.
func (b *Backend) RawClaimWork(ctx context.Context, conn *sql.Conn, table string, lease time.Duration, run func(benchops.ClaimOps) error) error {
	r := strings.NewReplacer("NOW", "UTC_TIMESTAMP(3)", "{T}", table)
	pick := r.Replace(`SELECT id, version, task_type, payload FROM {T}
WHERE (status = 'ready' AND due_at <= NOW) OR (status = 'claimed' AND claimed_until <= NOW)
ORDER BY priority DESC, due_at, id LIMIT ? FOR UPDATE SKIP LOCKED`)
	update, complete, batch := r.Replace(rawClaimUpdate), r.Replace(rawComplete), r.Replace(rawCompleteBatch)
	leaseMs := lease.Milliseconds()
	return run(benchops.ClaimOps{
		Claim: func(ctx context.Context, owner string, n int) (claimed []benchops.ClaimedRow, err error) {
			tx, err := conn.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
			if err != nil {
				return nil, err
			}
			defer tx.Rollback() //nolint:errcheck // after Commit it does nothing
			rows, err := tx.QueryContext(ctx, pick, n)
			if err != nil {
				return nil, err
			}
			args := []any{owner, leaseMs}
			for rows.Next() {
				var c benchops.ClaimedRow
				var typ string
				var payload []byte
				if err := rows.Scan(&c.ID, &c.Version, &typ, &payload); err != nil {
					rows.Close()
					return nil, err
				}
				c.Version++
				claimed = append(claimed, c)
				args = append(args, c.ID)
			}
			if err := rows.Close(); err != nil {
				return nil, err
			}
			if len(claimed) > 0 {
				if _, err := tx.ExecContext(ctx, update+strings.TrimSuffix(strings.Repeat("?, ", len(claimed)), ", ")+")", args...); err != nil {
					return nil, err
				}
			}
			return claimed, tx.Commit()
		},
		Complete: func(ctx context.Context, owner string, c benchops.ClaimedRow) (bool, error) {
			res, err := conn.ExecContext(ctx, complete, c.ID, owner, c.Version)
			if err != nil {
				return false, err
			}
			n, err := res.RowsAffected()
			return n == 1, err
		},
		CompleteBatch: func(ctx context.Context, owner string, rows []benchops.ClaimedRow) (int64, error) {
			args := make([]any, 0, 1+2*len(rows))
			args = append(args, owner)
			for _, c := range rows {
				args = append(args, c.ID, c.Version)
			}
			res, err := conn.ExecContext(ctx, batch+strings.TrimSuffix(strings.Repeat("(id = ? AND version = ?) OR ", len(rows)), " OR ")+")", args...)
			if err != nil {
				return 0, err
			}
			return res.RowsAffected()
		},
	})
}
