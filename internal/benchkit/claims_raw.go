package benchkit

import (
	"context"
	"database/sql"
	"strings"

	"github.com/schedlock/schedlock/dialects"
)

// rawClaimFunc runs the raw claim statement once and returns the rows it
// claimed.
type rawClaimFunc func(ctx context.Context, db *dialects.DB, owner string, batch int) (int, error)

// rawClaim is the hand-written single statement a developer would write
// to claim batch due rows of the default task table on dialect, and its
// text; nil where the database has none. It returns what a worker needs
// (id, type, payload), written here apart from the engine so that the
// engine is measured against SQL it did not produce.
func rawClaim(dialect, table string) (rawClaimFunc, string) {
	var text string
	switch dialect {
	case "postgres":
		now := "(clock_timestamp() AT TIME ZONE 'UTC')"
		text = `WITH picked AS (
  SELECT id FROM {T} WHERE (status = 'ready' AND due_at <= NOW) OR (status = 'claimed' AND claimed_until <= NOW)
  ORDER BY priority DESC, due_at, id LIMIT $1::bigint FOR UPDATE SKIP LOCKED)
UPDATE {T} AS t SET status = 'claimed', owner = $2::text, claimed_until = NOW + $3::bigint * interval '1 millisecond', version = t.version + 1, updated_at = NOW
FROM picked WHERE t.id = picked.id RETURNING t.id, t.task_type, t.payload`
		text = strings.ReplaceAll(text, "NOW", now)
	case "sqlite":
		now := "strftime('%Y-%m-%d %H:%M:%f', 'now')"
		text = `UPDATE {T} SET status = 'claimed', owner = ?2, claimed_until = strftime('%Y-%m-%d %H:%M:%f', 'now', (?3 / 1000.0) || ' seconds'), version = version + 1, updated_at = NOW
WHERE id IN (SELECT id FROM {T} WHERE (status = 'ready' AND due_at <= NOW) OR (status = 'claimed' AND claimed_until <= NOW)
  ORDER BY priority DESC, due_at, id LIMIT ?1) RETURNING id, task_type, payload`
		text = strings.ReplaceAll(text, "NOW", now)
	case "sqlserver":
		now := "SYSUTCDATETIME()"
		text = `WITH picked AS (
  SELECT TOP (@p1) * FROM {T} WITH (UPDLOCK, READPAST, ROWLOCK)
  WHERE (status = 'ready' AND due_at <= NOW) OR (status = 'claimed' AND claimed_until <= NOW)
  ORDER BY priority DESC, due_at, id)
UPDATE picked SET status = 'claimed', owner = @p2, claimed_until = DATEADD(millisecond, @p3, NOW), version = version + 1, updated_at = NOW
OUTPUT inserted.id, inserted.task_type, inserted.payload;`
		text = strings.ReplaceAll(text, "NOW", now)
	case "mysql":
		return rawMySQLClaim(table)
	default:
		return nil, ""
	}
	text = strings.ReplaceAll(text, "{T}", table)
	leaseMs := claimLease.Milliseconds()
	return func(ctx context.Context, db *dialects.DB, owner string, batch int) (int, error) {
		rows, err := db.SQL.QueryContext(ctx, text, batch, owner, leaseMs)
		if err != nil {
			return 0, err
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var id int64
			var typ string
			var payload []byte
			if err := rows.Scan(&id, &typ, &payload); err != nil {
				return n, err
			}
			n++
		}
		return n, rows.Err()
	}, text
}

// rawMySQLClaim is the claim a developer writes on MySQL and MariaDB,
// which have no UPDATE … RETURNING: one READ COMMITTED transaction (under
// REPEATABLE READ the locking read takes gap locks that block the other
// workers) that locks the due rows SKIP LOCKED, reads what a worker needs,
// and updates them by id. A single UPDATE … ORDER BY … LIMIT would neither
// skip the rows other workers hold nor return the rows it claimed, so it
// is no claim to compare with.
func rawMySQLClaim(table string) (rawClaimFunc, string) {
	const now = "UTC_TIMESTAMP(3)"
	pick := strings.ReplaceAll(`SELECT id, task_type, payload FROM {T}
WHERE (status = 'ready' AND due_at <= NOW) OR (status = 'claimed' AND claimed_until <= NOW)
ORDER BY priority DESC, due_at, id LIMIT ? FOR UPDATE SKIP LOCKED`, "NOW", now)
	update := strings.ReplaceAll(`UPDATE {T} SET status = 'claimed', owner = ?, claimed_until = TIMESTAMPADD(MICROSECOND, ? * 1000, NOW), version = version + 1, updated_at = NOW WHERE id IN (`, "NOW", now)
	pick, update = strings.ReplaceAll(pick, "{T}", table), strings.ReplaceAll(update, "{T}", table)
	leaseMs := claimLease.Milliseconds()
	return func(ctx context.Context, db *dialects.DB, owner string, batch int) (int, error) {
		tx, err := db.SQL.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
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
	}, "BEGIN (READ COMMITTED); " + pick + "; " + update + "…); COMMIT"
}
