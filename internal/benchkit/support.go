package benchkit

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/schedlock/schedlock/dialects"
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

// RoundTripper is implemented by a backend's bench support, or by the
// opened backend itself, whose database needs another trivial statement
// than "SELECT 1" (for example "SELECT 1 FROM DUAL"). For a store (RawStore) it names the command of
// StoreOps.RoundTrip in the report ("PING"); without it the report says
// "round trip".
type RoundTripper interface {
	RoundTripSQL() string
}

// SessionBaseline is implemented by an opened SQL backend (its own type)
// that gives the raw session-lock statements the engine competes with, as
// RawSessions does for registered support: TryLock and Unlock of the
// returned ops run one statement each on one connection. The backend
// knows what its detection found, so it takes no Info.
type SessionBaseline interface {
	RawSessionOps() sqlkit.SessionOps
}

// HoldingCounter is implemented by an opened SQL backend that can count,
// from the server's own views, the distinct sessions that hold the
// session locks called names, as SessionCounter does for registered
// support. conn is a connection taken before the locks.
type HoldingCounter interface {
	CountHoldingSessions(ctx context.Context, conn *sql.Conn, names []string) (int, error)
}

// ClaimBaseline is implemented by an opened SQL backend with a claim a
// developer writes by hand, as RawClaimer is for registered support: the
// claim of batch due rows of the default task table named table (rows
// claimed for lease, by owner) on the backend's pool db, returning how
// many it claimed, and its text for the report.
type ClaimBaseline interface {
	RawClaim(table string, lease time.Duration) (claim func(ctx context.Context, db *sql.DB, owner string, batch int) (int, error), text string)
}

// RawStore is implemented by a lock store's bench support: the raw commands
// the engine competes with, on one client of the store.
type RawStore interface {
	RawStoreOps(ctx context.Context, b dialects.Backend) (StoreOps, error)
}

// StoreOps are a store's raw lock commands on one client.
type StoreOps struct {
	RoundTrip func(ctx context.Context) error                      // one trivial command (PING, a Get)
	TryLock   func(ctx context.Context, name string) (bool, error) // one raw take
	Unlock    func(ctx context.Context, name string) error         // one raw release
	Close     func() error
}

// close closes o's client; nil Close is nothing to close.
func (o StoreOps) close() {
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

// Register records the bench support of the dialect called name; support
// implements any of RawSessions, SessionCounter and RoundTripper (SQL
// databases), or RawStore and RoundTripper (lock stores). Backends
// call it from init in their own package. A second call for the same name
// replaces the first. A backend whose opened type implements
// SessionBaseline, HoldingCounter, ClaimBaseline or RoundTripper needs no
// registration: what the opened backend implements is used first.
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
