package lock

import (
	"context"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// Locker acquires named locks with one strategy on one database: *DB is
// one, WithNamespace wraps one. A Locker is safe for concurrent use.
type Locker interface {
	// Strategy reports how this locker holds locks.
	Strategy() Strategy
	// Acquire takes the lock called name. It tries once when opts.Wait is
	// 0, else it retries every opts.RetryEvery until opts.Wait has passed.
	// A lock held by someone else gives an error matching ErrHeld (a
	// *HeldError when the holder is known; a paused lock also matches
	// ErrPaused and is not waited for). An empty name or invalid options
	// give an error matching ErrInvalid. When ctx ends, Acquire returns an
	// error matching ctx's and leaves no lock taken: a statement already
	// sent is waited for, and a lock it took is released again.
	Acquire(ctx context.Context, name string, opts Options) (Lease, error)
}

// Lease is one held lock, from Acquire until it is released or lost. Its
// methods are safe for concurrent use. A backend's lease (dialects.Lease)
// is a Lease, and a Lease is one: the two interfaces have one method set.
type Lease interface {
	// Name is the lock name as the caller gave it (without the namespace).
	Name() string
	// Owner identifies the holder: Options.Owner, or the one NewOwner
	// generated.
	Owner() string
	// Token returns the fencing token and true, or 0 and false when the
	// strategy or table layout has none. It grows with every acquire of the
	// name, so a resource that refuses a token lower than one it has seen
	// is safe from a holder that lost the lock without knowing.
	Token() (int64, bool)
	// Until is the host-clock instant by which the lease ends unless it is
	// refreshed, computed conservatively (from before the statement was
	// sent). The zero time means no lease end: a session lock lasts as long
	// as its connection.
	Until() time.Time
	// Refresh extends the lease by the acquire-time AtMost from the
	// database's now (table strategy and stores), or proves the lock is
	// still held (session strategy). It fails with an error matching
	// ErrLeaseLost when the lease is gone, ErrNotOwner when another owner
	// holds the lock. WithLock calls it every AtMost/3.
	Refresh(ctx context.Context) error
	// Release gives the lock up, keeping it until locked-at + AtLeast: in
	// the lease where the strategy has one, else (session locks) held by
	// this process on its connection and freed there in the background once
	// AtLeast has passed (Release returns at once; a process that exits, or
	// a connection that drops, frees it sooner). It fails with ErrLeaseLost
	// when the lease was lost before and ErrNotOwner when another owner
	// holds the lock; releasing twice fails with ErrLeaseLost.
	Release(ctx context.Context) error
	// Done is closed when the lease ends: released, or lost.
	Done() <-chan struct{}
	// Err is nil while the lease is held and after a clean Release; once
	// Done is closed by a loss it matches ErrLeaseLost and says why.
	Err() error
}

// The two lease interfaces have one method set, so values of either are
// values of the other.
var (
	_ Lease          = dialects.Lease(nil)
	_ dialects.Lease = Lease(nil)
)

// Options tune one Acquire (and WithLock). The zero value: one try, a
// 30-minute lease, no at-least, a generated owner. Options converts to
// dialects.Options and back (dialects.Options(o)): the fields are the
// engine's, and Normalize checks them as the engine does.
type Options struct {
	// AtMost is the lease length (default DefaultAtMost, 30 minutes): a
	// holder that neither refreshes nor releases loses the lock AtMost
	// after the acquire, so a crashed node does not hold a job forever.
	// Refresh extends the lease by AtMost; WithLock refreshes every
	// AtMost/3 while the job runs. Session locks have no lease and ignore
	// it: they end with their connection.
	AtMost time.Duration
	// AtLeast keeps the lock after an early Release until locked-at +
	// AtLeast (default 0: released at once), on every strategy, so a node
	// whose clock is behind, or whose scheduler fires a moment later,
	// finds it taken and skips (ShedLock's lockAtLeastFor). The table
	// strategy and the stores keep it in the lease; a session lock is kept
	// by this process on its connection, freed when AtLeast has passed or
	// the process exits. It must not exceed AtMost.
	AtLeast time.Duration
	// Wait is how long Acquire keeps trying a lock someone else holds
	// (default 0: one try). A paused lock is not waited for.
	Wait time.Duration
	// RetryEvery is the pause between tries while waiting (default 100ms).
	RetryEvery time.Duration
	// Owner is recorded as the holder, and checked on Refresh and Release
	// (default: NewOwner(), "host:pid:random"). Two Acquires with one Owner
	// are one holder to the owner checks. Like a lock name it is valid
	// UTF-8 without a NUL byte and not only white space, and it has at
	// most 255 bytes.
	Owner string
}

// Normalize checks o and fills in the defaults, as Acquire does. It
// returns an error matching ErrInvalid for a negative duration, an
// AtLeast longer than AtMost, or an owner no lock may record.
func (o Options) Normalize() (Options, error) {
	n, err := dialects.Options(o).Normalize()
	return Options(n), err
}

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
	return dialects.WithLock(ctx, engineLocker(locker), name, dialects.Options(opts), func(ctx context.Context, lease dialects.Lease) error {
		return fn(ctx, lease)
	})
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
func WithNamespace(locker Locker, ns string) Locker {
	if ns == "" {
		return locker
	}
	return userLocker(dialects.WithNamespace(engineLocker(locker), ns))
}
