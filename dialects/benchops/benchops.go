// Package benchops is the contract between a backend and the bench
// harness (`schedlock bench`, internal/benchkit): the raw baselines the
// engine's figures are compared with — the trivial round trip, the raw
// lock commands a developer would write by hand, a server-side count of
// the sessions holding locks, a hand-written claim.
//
// A backend gives them as optional interfaces of the Backend its Open
// returns, methods of its own type; the harness finds them by type
// assertion on the opened backend, and measures a backend that gives none
// through its lockers alone. The package holds types only and imports
// nothing but the standard library, so a backend implements the contract
// without linking the harness, and a program that links the backend for
// its locks does not link the bench either.
//
// Every raw baseline is the database's or store's own statements or
// commands on its driver's or client's own connection (a *pgx.Conn, a
// go-sql-driver connection, a go-redis client, …), written in the
// backend's package apart from the engine: never the engine's code.
package benchops

import (
	"context"
	"database/sql"
	"time"
)

// RoundTripper is implemented by an opened backend whose trivial round
// trip is not "SELECT 1": a SQL database that needs another statement
// ("SELECT 1 FROM DUAL"), or a store, whose StoreOps.RoundTrip it names
// in the report ("PING"). Without it a SQL database runs "SELECT 1" and a
// store's round trip is reported as "round trip".
type RoundTripper interface {
	RoundTripSQL() string
}

// SessionBaseline is implemented by an opened SQL backend with session
// locks: the raw lock statements its session locker competes with, on a
// connection of the database's driver of its own (not database/sql, not
// the engine's statements), opened with the settings the backend's pool
// uses.
type SessionBaseline interface {
	// RawSession opens one driver connection with the raw statements.
	// The harness opens one per contending worker and closes each with
	// SessionOps.Close.
	RawSession(ctx context.Context) (SessionOps, error)
}

// SessionOps are a database's raw session-lock statements on one driver
// connection, one statement each. Every field but Lock is required.
type SessionOps struct {
	// RoundTrip runs the trivial statement (SELECT 1) on the connection.
	RoundTrip func(ctx context.Context) error
	// TryLock takes name without waiting: true when taken, false when
	// another session holds it.
	TryLock func(ctx context.Context, name string) (bool, error)
	// Unlock frees name, which this connection holds: false when it did
	// not hold it.
	Unlock func(ctx context.Context, name string) (bool, error)
	// Lock waits on the server up to wait for name (pg_advisory_lock
	// under lock_timeout, GET_LOCK(name, seconds)): false when the wait
	// ran out. nil when the database has no server-side wait.
	Lock func(ctx context.Context, name string, wait time.Duration) (bool, error)
	// Close closes the connection.
	Close func() error
}

// StoreBaseline is implemented by an opened lock store (Redis, etcd,
// ZooKeeper) that gives the raw commands its locker competes with: the
// textbook lock of the store, on a client of its own.
type StoreBaseline interface {
	// RawStoreOps opens one client of the store with its raw commands.
	// The harness opens one per contending worker and closes each with
	// StoreOps.Close; the raw locks of every client opened on one backend
	// must exclude each other, as the engine's do.
	RawStoreOps(ctx context.Context) (StoreOps, error)
}

// StoreOps are a store's raw lock commands on one client. Every field but
// Close is required.
type StoreOps struct {
	// RoundTrip runs one trivial command (PING, a linearizable Get).
	RoundTrip func(ctx context.Context) error
	// TryLock is one raw take of name: true when taken, false when another
	// client holds it.
	TryLock func(ctx context.Context, name string) (bool, error)
	// Unlock is one raw release of a name this client took.
	Unlock func(ctx context.Context, name string) error
	// Close closes the client and what it made; nil when there is nothing
	// to close.
	Close func() error
}

// HoldingCounter is implemented by an opened SQL backend that can count,
// from the server's own views, the distinct sessions (server connections)
// that hold the session locks called names: how `bench --locks` reports
// the connections the engine really used. conn is a connection taken
// before the locks, so the count works even when they have used up the
// server's connection limit.
type HoldingCounter interface {
	CountHoldingSessions(ctx context.Context, conn *sql.Conn, names []string) (int, error)
}

// ClaimWork is implemented by an opened SQL backend with the claim work a
// developer writes by hand — claim a batch with SKIP LOCKED (or what the
// database has instead), then complete each row, or the whole batch in one
// statement, owner- and version-checked — to measure the engine's claims
// and completions against (`bench --claims`). It is written in the
// backend's package apart from the engine, so that the engine is measured
// against SQL it did not produce, and runs on the driver's own connection:
// pgx's Conn on PostgreSQL, the driver's connection through a pinned
// *sql.Conn where database/sql is the driver's only API.
type ClaimWork interface {
	// RawClaimWork runs run with the raw work on table (the default task
	// table's layout), rows claimed for lease, on conn — one connection of
	// the backend's pool, pinned by the caller for the whole run — and
	// returns run's error.
	RawClaimWork(ctx context.Context, conn *sql.Conn, table string, lease time.Duration, run func(ClaimOps) error) error
	// RawClaimTexts are the statements of the raw work on table, for the
	// report.
	RawClaimTexts(table string) ClaimTexts
}

// ClaimTexts are the statements of a raw claim work.
type ClaimTexts struct {
	Claim, Complete, CompleteBatch string
}

// ClaimedRow is one row a raw claim took: its id and the version it
// holds.
type ClaimedRow struct {
	ID, Version int64
}

// ClaimOps are the raw claim work on one connection. Every field is
// required.
type ClaimOps struct {
	// Claim claims up to batch due rows for owner.
	Claim func(ctx context.Context, owner string, batch int) ([]ClaimedRow, error)
	// Complete marks one row done where owner holds it at its version,
	// and reports whether it did.
	Complete func(ctx context.Context, owner string, row ClaimedRow) (bool, error)
	// CompleteBatch marks rows done in one statement, each where owner
	// holds it at its version, and returns how many it marked.
	CompleteBatch func(ctx context.Context, owner string, rows []ClaimedRow) (int64, error)
}
