package benchkit

import (
	"context"
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
	query := true
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
		// No UPDATE … RETURNING and no SKIP LOCKED on UPDATE: the single
		// statement claims by ORDER BY … LIMIT and reads nothing back.
		now := "UTC_TIMESTAMP(3)"
		text = `UPDATE {T} SET status = 'claimed', owner = ?, claimed_until = TIMESTAMPADD(MICROSECOND, ? * 1000, NOW), version = version + 1, updated_at = NOW
WHERE (status = 'ready' AND due_at <= NOW) OR (status = 'claimed' AND claimed_until <= NOW)
ORDER BY priority DESC, due_at, id LIMIT ?`
		text = strings.ReplaceAll(text, "NOW", now)
		query = false
	default:
		return nil, ""
	}
	text = strings.ReplaceAll(text, "{T}", table)
	leaseMs := claimLease.Milliseconds()
	return func(ctx context.Context, db *dialects.DB, owner string, batch int) (int, error) {
		if !query {
			res, err := db.SQL.ExecContext(ctx, text, owner, leaseMs, batch)
			if err != nil {
				return 0, err
			}
			n, err := res.RowsAffected()
			return int(n), err
		}
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
