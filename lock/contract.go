package lock

import (
	"context"

	"github.com/schedlock/schedlock/dialects"
)

// Locker acquires named locks with one strategy on one database; *DB is
// one. See dialects.Locker.
type Locker = dialects.Locker

// Lease is one held lock. See dialects.Lease.
type Lease = dialects.Lease

// Options tune one Acquire; the zero value means one try, a 30-minute
// lease, no at-least and a generated owner. See dialects.Options.
type Options = dialects.Options

// Strategy names how a lock is held.
type Strategy = dialects.Strategy

// The strategies.
const (
	// StrategySession: the database's own named lock on a dedicated
	// connection, freed when that connection ends.
	StrategySession = dialects.StrategySession
	// StrategyTable: a lease table with owner, lease end and fencing token.
	StrategyTable = dialects.StrategyTable
)

// DefaultAtMost is the lease length when Options.AtMost is zero.
const DefaultAtMost = dialects.DefaultAtMost

// Info is what detection learned about the database.
type Info = dialects.Info

// The errors every call may return, to match with errors.Is.
var (
	// ErrHeld: another owner holds the lock (a *HeldError names it when known).
	ErrHeld = dialects.ErrHeld
	// ErrPaused: the lock is paused (`schedlock pause`); the error also
	// matches ErrHeld, and its *HeldError names who paused it and until
	// when. A paused lock is not waited for.
	ErrPaused = dialects.ErrPaused
	// ErrNotOwner: release or refresh by someone who does not hold the lock.
	ErrNotOwner = dialects.ErrNotOwner
	// ErrLeaseLost: the lease ended without Release (expired, taken over,
	// connection dropped).
	ErrLeaseLost = dialects.ErrLeaseLost
	// ErrUnsupported: this database cannot do it (a strategy, a scheme).
	ErrUnsupported = dialects.ErrUnsupported
	// ErrPrivilege: the database user lacks a privilege.
	ErrPrivilege = dialects.ErrPrivilege
	// ErrNoTable: the lease table does not exist (see DB.CreateTable).
	ErrNoTable = dialects.ErrNoTable
	// ErrInvalid: bad input: an empty name, a negative duration, a bad DSN.
	ErrInvalid = dialects.ErrInvalid
)

// HeldError is the refusal that names the holder; it matches ErrHeld.
type HeldError = dialects.HeldError

// Error carries the backend and operation that failed and unwraps to the
// cause.
type Error = dialects.Error

// NewOwner returns a holder identity unique to this process and call:
// "host:pid:random".
func NewOwner() string { return dialects.NewOwner() }

// WithLock acquires name on locker, runs fn while the lease is held and
// releases it. It returns an error matching ErrHeld when the lock is taken,
// and cancels fn's context when the lease is lost. See dialects.WithLock.
func WithLock(ctx context.Context, locker Locker, name string, opts Options, fn func(ctx context.Context, lease Lease) error) error {
	return dialects.WithLock(ctx, locker, name, opts, fn)
}

// WithNamespace returns a Locker that takes the lock called name in
// namespace ns (stored as ns + "::" + name on every backend), so that
// environments sharing a database keep their locks apart; leases report the
// name the caller gave. An empty ns returns locker. A DSN's x-namespace
// option does the same for Open — except on Redis's shedlock layout,
// where Open makes it ShedLock's environment (job-lock:NS:NAME, as
// ShedLock's .environment("NS") does), which a wrapper around a locker
// cannot: give such a namespace in the DSN. A namespace follows the rules of lock
// names, holds no ':' and has at most 32 characters; a bad one makes every
// Acquire fail with ErrInvalid.
func WithNamespace(locker Locker, ns string) Locker { return dialects.WithNamespace(locker, ns) }
