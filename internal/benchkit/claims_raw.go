package benchkit

import (
	"context"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// RawClaim runs a hand-written claim once and returns how many rows it
// claimed.
type RawClaim func(ctx context.Context, db *sqlkit.DB, owner string, batch int) (int, error)

// RawClaimer is implemented by the bench support of a SQL dialect that
// has a claim a developer would write by hand, to measure the engine's
// claims against (`bench --claims`): written in the dialect's package
// apart from the engine, so that the engine is measured against SQL it
// did not produce. Without it the engine's figures stand alone.
type RawClaimer interface {
	// RawClaim is the claim of batch due rows of the default task table
	// named table (rows claimed for lease, by owner), returning what a
	// worker needs (id, type, payload), and its text for the report.
	RawClaim(table string, lease time.Duration) (RawClaim, string)
}

// StatementClaim is the RawClaim of one statement that claims and
// returns the rows: text takes the batch size, the owner and the lease in
// milliseconds as its three parameters and returns id, task type and
// payload.
func StatementClaim(text string, lease time.Duration) RawClaim {
	leaseMs := lease.Milliseconds()
	return func(ctx context.Context, db *sqlkit.DB, owner string, batch int) (int, error) {
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
	}
}

// rawClaim is the raw claim on table of backend b, whose kit DB is db:
// the opened backend's (ClaimBaseline), else its dialect's registered one
// (RawClaimer); nil where it has none.
func rawClaim(b dialects.Backend, db *sqlkit.DB, table string) (RawClaim, string) {
	if cb, ok := b.(ClaimBaseline); ok {
		claim, text := cb.RawClaim(table, claimLease)
		if claim == nil {
			return nil, ""
		}
		return func(ctx context.Context, db *sqlkit.DB, owner string, batch int) (int, error) {
			return claim(ctx, db.SQL, owner, batch)
		}, text
	}
	if rc, ok := supportFor(db.Info.Dialect).(RawClaimer); ok {
		return rc.RawClaim(table, claimLease)
	}
	return nil, ""
}
