package benchkit

import (
	"context"
	"database/sql"
	"sync"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/benchops"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// RawSessions is implemented by a backend's bench support that can give the
// raw session-lock statements the engine competes with: TryLock and Unlock
// of the returned ops run one statement each on one connection.
type RawSessions interface {
	RawSessionOps(db *sql.DB, info dialects.Info) sqlkit.SessionOps
}

// SessionCounter is implemented by a backend's bench support that can
// count, from the server's own views, the distinct sessions (server
// connections) that hold the session locks called names. It is how
// `bench --locks` reports the connections the engine really used. conn is
// a connection taken before the locks, so the count works even when they
// have used up the server's connection limit; info is what Detect found.
type SessionCounter interface {
	CountHoldingSessions(ctx context.Context, conn *sql.Conn, info dialects.Info, names []string) (int, error)
}

// RoundTripper is implemented by an opened backend, or by a SQL
// backend's registered bench support, whose trivial round trip is not
// "SELECT 1"; see benchops.RoundTripper.
type RoundTripper = benchops.RoundTripper

// SessionBaseline is implemented by an opened SQL backend (its own type)
// that gives the raw session-lock statements the engine competes with, as
// RawSessions does for registered support: TryLock and Unlock of the
// returned ops run one statement each on one connection. The backend
// knows what its detection found, so it takes no Info.
type SessionBaseline interface {
	RawSessionOps() sqlkit.SessionOps
}

// HoldingCounter is implemented by an opened SQL backend that counts the
// sessions holding locks; see benchops.HoldingCounter.
type HoldingCounter = benchops.HoldingCounter

// ClaimBaseline is implemented by an opened SQL backend with a claim a
// developer writes by hand; see benchops.ClaimBaseline.
type ClaimBaseline = benchops.ClaimBaseline

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

var (
	supportMu sync.RWMutex
	supports  = map[string]any{}
)

// Register records the bench support of the SQL dialect called name;
// support implements any of RawSessions, SessionCounter, RawClaimer and
// RoundTripper. A second call for the same name replaces the first. A
// backend whose opened type implements SessionBaseline, HoldingCounter,
// ClaimBaseline or RoundTripper needs no registration: what the opened
// backend implements is used first. Lock stores never register: an
// opened store implements benchops.StoreBaseline.
func Register(name string, support any) {
	supportMu.Lock()
	defer supportMu.Unlock()
	supports[name] = support
}

// supportFor returns the registered support of dialect name, or nil.
func supportFor(name string) any {
	supportMu.RLock()
	defer supportMu.RUnlock()
	return supports[name]
}

// roundTripper is the RoundTripper of the opened backend, else of its
// registered support.
func roundTripper(b dialects.Backend, support any) (RoundTripper, bool) {
	if rt, ok := b.(RoundTripper); ok {
		return rt, true
	}
	rt, ok := support.(RoundTripper)
	return rt, ok
}

// holdingCounter is how the sessions holding names are counted on db, the
// kit DB of backend b: by the opened backend (HoldingCounter), else by its
// registered support (SessionCounter); nil when neither counts.
func holdingCounter(b dialects.Backend, db *sqlkit.DB) func(ctx context.Context, conn *sql.Conn, names []string) (int, error) {
	if c, ok := b.(HoldingCounter); ok {
		return c.CountHoldingSessions
	}
	if c, ok := supportFor(db.Dialect.Name).(SessionCounter); ok {
		return func(ctx context.Context, conn *sql.Conn, names []string) (int, error) {
			return c.CountHoldingSessions(ctx, conn, db.Info, names)
		}
	}
	return nil
}
