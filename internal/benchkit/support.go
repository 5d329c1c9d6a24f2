package benchkit

import (
	"context"
	"database/sql"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/benchops"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// closeSession closes o's connection.
func closeSession(o SessionOps) {
	if o.Close != nil {
		_ = o.Close()
	}
}

// RoundTripper is implemented by an opened backend whose trivial round
// trip is not "SELECT 1"; see benchops.RoundTripper.
type RoundTripper = benchops.RoundTripper

// SessionBaseline is implemented by an opened SQL backend that gives the
// raw session-lock statements the engine competes with, on its driver's
// own connection; see benchops.SessionBaseline.
type SessionBaseline = benchops.SessionBaseline

// SessionOps are a database's raw session-lock statements on one driver
// connection; see benchops.SessionOps.
type SessionOps = benchops.SessionOps

// HoldingCounter is implemented by an opened SQL backend that counts the
// sessions holding locks; see benchops.HoldingCounter.
type HoldingCounter = benchops.HoldingCounter

// ClaimWork is implemented by an opened SQL backend with the claim work a
// developer writes by hand; see benchops.ClaimWork.
type ClaimWork = benchops.ClaimWork

// StoreOps are a store's raw lock commands on one client; see
// benchops.StoreOps and benchops.StoreBaseline, which an opened store
// implements to give them.
type StoreOps = benchops.StoreOps

// closeOps closes o's client; nil Close is nothing to close.
func closeOps(o StoreOps) {
	if o.Close != nil {
		_ = o.Close()
	}
}

// DefaultRoundTripSQL is the trivial statement of the round-trip baseline.
const DefaultRoundTripSQL = "SELECT 1"

// roundTripper is the RoundTripper of the opened backend.
func roundTripper(b dialects.Backend) (RoundTripper, bool) {
	rt, ok := b.(RoundTripper)
	return rt, ok
}

// holdingCounter is how the sessions holding names are counted on db, the
// kit DB of backend b: by the opened backend (HoldingCounter); nil when
// it does not count.
func holdingCounter(b dialects.Backend, db *sqlkit.DB) func(ctx context.Context, conn *sql.Conn, names []string) (int, error) {
	if c, ok := b.(HoldingCounter); ok {
		return c.CountHoldingSessions
	}
	return nil
}
