package sqlkit

import (
	"context"
	"database/sql"
	"time"
)

// StatementClaim is the raw claim of `schedlock bench --claims` for a
// database that claims in one statement: text takes the batch size, the
// owner and the lease in milliseconds as its three parameters and returns
// the claimed rows' id, task type and payload. It is what a backend's
// RawClaim (benchops.ClaimBaseline) returns for such a statement.
func StatementClaim(text string, lease time.Duration) func(ctx context.Context, db *sql.DB, owner string, batch int) (int, error) {
	leaseMs := lease.Milliseconds()
	return func(ctx context.Context, db *sql.DB, owner string, batch int) (int, error) {
		rows, err := db.QueryContext(ctx, text, batch, owner, leaseMs)
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
	}
}
