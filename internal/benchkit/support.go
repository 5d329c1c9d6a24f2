package benchkit

import (
	"context"
	"database/sql"
	"sync"

	"github.com/schedlock/schedlock/dialects"
)

// RawSessions is implemented by a backend's bench support that can give the
// raw session-lock statements the engine competes with: TryLock and Unlock
// of the returned ops run one statement each on one connection.
type RawSessions interface {
	RawSessionOps(db *sql.DB, info dialects.Info) dialects.SessionOps
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

// RoundTripper is implemented by a backend's bench support whose database
// needs another trivial statement than "SELECT 1" (for example
// "SELECT 1 FROM DUAL").
type RoundTripper interface {
	RoundTripSQL() string
}

// DefaultRoundTripSQL is the trivial statement of the round-trip baseline.
const DefaultRoundTripSQL = "SELECT 1"

var (
	supportMu sync.RWMutex
	supports  = map[string]any{}
)

// Register records the bench support of the dialect called name; support
// implements any of RawSessions, SessionCounter and RoundTripper. Backends
// call it from init in their own package. A second call for the same name
// replaces the first.
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
