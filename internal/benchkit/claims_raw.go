package benchkit

import (
	"context"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// RawClaim runs a hand-written claim once and returns how many rows it
// claimed.
type RawClaim func(ctx context.Context, db *sqlkit.DB, owner string, batch int) (int, error)

// rawClaim is the raw claim on table of backend b, whose kit DB is db:
// the opened backend's (ClaimBaseline); nil where it has none.
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
	return nil, ""
}
