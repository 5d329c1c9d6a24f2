package mysql

import (
	"context"
	"database/sql"
	"strings"
	"time"
)

// RawClaim is the claim a developer writes on MySQL and MariaDB, which
// have no UPDATE … RETURNING, for `bench --claims` (which finds it on the
// opened backend): on the default task table named table, rows claimed
// for lease, one READ COMMITTED transaction (under REPEATABLE READ the
// locking read takes gap locks that block the other workers) that locks
// the due rows SKIP LOCKED, reads what a worker needs, and updates them by
// id; and its text for the report. A single UPDATE … ORDER BY … LIMIT
// would neither skip the rows other workers hold nor return the rows it
// claimed, so it is no claim to compare with.
func (b *Backend) RawClaim(table string, lease time.Duration) (func(ctx context.Context, db *sql.DB, owner string, batch int) (int, error), string) {
	r := strings.NewReplacer("NOW", "UTC_TIMESTAMP(3)", "{T}", table)
	pick := r.Replace(`SELECT id, task_type, payload FROM {T}
WHERE (status = 'ready' AND due_at <= NOW) OR (status = 'claimed' AND claimed_until <= NOW)
ORDER BY priority DESC, due_at, id LIMIT ? FOR UPDATE SKIP LOCKED`)
	update := r.Replace(`UPDATE {T} SET status = 'claimed', owner = ?, claimed_until = TIMESTAMPADD(MICROSECOND, ? * 1000, NOW), version = version + 1, updated_at = NOW WHERE id IN (`)
	leaseMs := lease.Milliseconds()
	claim := func(ctx context.Context, db *sql.DB, owner string, batch int) (int, error) {
		tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
		if err != nil {
			return 0, err
		}
		defer tx.Rollback() //nolint:errcheck // after Commit it does nothing
		rows, err := tx.QueryContext(ctx, pick, batch)
		if err != nil {
			return 0, err
		}
		args := []any{owner, leaseMs}
		for rows.Next() {
			var id int64
			var typ string
			var payload []byte
			if err := rows.Scan(&id, &typ, &payload); err != nil {
				rows.Close()
				return 0, err
			}
			args = append(args, id)
		}
		if err := rows.Close(); err != nil {
			return 0, err
		}
		if err := rows.Err(); err != nil {
			return 0, err
		}
		n := len(args) - 2
		if n > 0 {
			if _, err := tx.ExecContext(ctx, update+strings.TrimSuffix(strings.Repeat("?, ", n), ", ")+")", args...); err != nil {
				return 0, err
			}
		}
		return n, tx.Commit()
	}
	return claim, "BEGIN (READ COMMITTED); " + pick + "; " + update + "…); COMMIT"
}
