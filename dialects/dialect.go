// Package dialects is schedlock's lock contract and the registry of its
// backends: the Backend every backend implements and its optional
// interfaces, the Dialect entry a backend registers (sub-packages
// postgres, mysql, sqlite, redis, memory, …; import dialects/all for every
// one of them), and the model the commands report in (listings,
// capabilities, support rows, errors with remedies). The database/sql
// machinery SQL backends are built with is package dialects/sqlkit, with
// dialects/locktable and dialects/claimtable. Programs use package lock
// instead.
//
// # Adding a backend
//
// A backend is one directory and one line; the checklist follows the one
// golang-migrate gives its database drivers (database/driver.go in
// github.com/golang-migrate/migrate):
//
//  1. Create the package dialects/NAME. Everything about the database
//     lives there: its SQL or protocol, detection, error mapping, names.
//  2. Define the backend's own type and its Open(ctx, Target) (Backend,
//     error): the type implements Backend (Detected, Locker, Recommend,
//     Close), owns its connections, and keeps what detection proves in
//     its own fields, never in package-level state. A SQL backend embeds
//     *sqlkit.DB (sqlkit.Open connects, sqlkit.New wraps the pool) and
//     implements sqlkit.Engine, plus SessionEngine, AdminEngine and
//     ProbeEngine where the database has them; a store implements
//     Backend on its client (dialects/memory is the smallest example).
//  3. Implement the optional interfaces it can honour: LockLister for
//     `locks ls`, LockBreaker for `unlock` (its LockAdmin is the one way to
//     find a session lock's holder and end that session), Prober for
//     `detect`, Pauser for `pause`/`resume`, RiskReporter for a store
//     whose deployment can break the contract (report such risks under
//     the IDs of TwoHolderRiskIDs); on its lockers LeaseLocker (and TableLocker for a SQL table),
//     TableCreator, TableDropper and RunHistorian; claimtable.Claimant for
//     task-row claims; the raw baselines of package benchops for
//     `schedlock bench`.
//  4. Register one Dialect in init, with everything the command line,
//     the docs and the registry need before a connection exists: Name,
//     Title, Schemes (default ports, and URL for a scheme dburl does not
//     know), Forms, Starts, Products, Support (its rows of the support
//     table), the DSN rules (DriverQuery, ConnString, CheckConn, Where,
//     NameConnections, Files), ConnectHint,
//     CheckSessionNames, NamespaceTable where they apply, and Open.
//  5. Take all configuration from the DSN (Target) and its x- options;
//     never read flags or the environment, never print, and name no
//     command-line flag in an error.
//  6. Add the line importing it to dialects/all (with a no_NAME build tag,
//     as all/memory.go does); TestKnownBackends then asks for its schemes
//     in internal/dsn's table, so that a program that does not link it is
//     told which import to add.
//  7. Add its own tests for Open, Close and its error mapping, and run the
//     conformance suite (dialects/dialecttest) against it: dialecttest.Run
//     on an opened Backend. The backend is done when it passes.
//  8. A SQL backend with rows runs claimtable/claimtest against its
//     claims.
//
// # The lock contract
//
// Every Locker, whatever the strategy and database, keeps these promises:
//
//  1. Mutual exclusion: at most one live holder per lock name at any instant,
//     judged by the database's clock.
//  2. Try, don't hang: Acquire waits at most Options.Wait (default: one try) and
//     returns an error that matches ErrHeld when the lock stays taken. While
//     it waits it also rides out a store that is unavailable for now (a cut
//     connection, a failover or leader election under way), and it does not
//     wait out a pause (ErrPaused).
//  3. Lease: Options.AtMost bounds a hold that is never refreshed (table
//     strategy); Options.AtLeast keeps the lock after an early release
//     (ShedLock semantics): on the server's lease (table, stores), or on
//     the session strategy by the process, which keeps the lock on its
//     connection until then (and frees it earlier only when the
//     connection or the process ends: see Freed).
//  4. Owner check: Release and Refresh by anyone but the owner fail with
//     ErrNotOwner and change nothing; after the lease was lost they fail with
//     ErrLeaseLost.
//  5. Refresh extends the lease by AtMost from the database's now, and fails if
//     the lease was lost.
//  6. Fencing token: on the table strategy a number that grows on every
//     successful acquire of a name — on a store that can lose its data, also
//     across that loss where it can (Redis: the server's clock is its
//     floor); Lease.Token reports false where the backend has none
//     (advisory locks, presets without a token column).
//  7. Database time: lease arithmetic uses the server clock.
//  8. Connection binding: a session lock lives on one dedicated connection that
//     is never shared while it holds the lock; a dropped connection closes
//     Lease.Done and Lease.Err reports ErrLeaseLost.
//  9. Names are data: any name CheckName accepts (non-empty UTF-8, no NUL
//     byte, not only white space) is passed as a bind parameter; where a
//     backend limits names the mapping is deterministic (see MapName).
//     Owners are checked alike (CheckOwner).
package dialects

import (
	"context"
	"strings"
	"time"
	"unicode"
)

// Strategy names how a lock is held.
type Strategy string

const (
	// StrategySession uses the database's own named lock (pg_try_advisory_lock,
	// GET_LOCK, sp_getapplock, DBMS_LOCK) on a pinned connection. No lease, no
	// token; released when the connection drops.
	StrategySession Strategy = "session"
	// StrategyTable uses a lease: on a SQL database a lease table (one row
	// per lock name with owner, lease end and fencing token, all arithmetic
	// on the database clock), on a store its keys or nodes. ParseStrategy
	// also reads it as "lease" (StrategyLeaseAlias).
	StrategyTable Strategy = "table"
)

// StrategyLeaseAlias is another name ParseStrategy accepts for
// StrategyTable: the word that fits a store, where the lease is a key.
const StrategyLeaseAlias = "lease"

// Strategies lists the strategies in the order they are documented.
var Strategies = []Strategy{StrategySession, StrategyTable}

// StrategyOf is the Strategy s names, alias resolved, for a value already
// checked with ParseStrategy; an unknown s is returned as it is, for the
// locker to refuse.
func StrategyOf(s string) Strategy {
	if st, err := ParseStrategy(s); err == nil {
		return st
	}
	return Strategy(s)
}

// ParseStrategy turns a flag value into a Strategy: "session", "table",
// or "lease" (StrategyTable).
func ParseStrategy(s string) (Strategy, error) {
	if s == StrategyLeaseAlias {
		return StrategyTable, nil
	}
	for _, st := range Strategies {
		if string(st) == s {
			return st, nil
		}
	}
	return "", invalidf("unknown strategy %q: use session or table (table is also called lease)", s)
}

// Locker acquires named locks with one strategy on one database.
// A Locker is safe for concurrent use.
type Locker interface {
	// Strategy reports how this locker holds locks.
	Strategy() Strategy
	// Acquire takes the lock called name. It tries once when opts.Wait is 0,
	// else it retries until opts.Wait has passed. A lock held by someone else
	// gives an error matching ErrHeld (a *HeldError when the holder is known).
	// An empty name or invalid options give an error matching ErrInvalid.
	// When ctx ends, Acquire returns an error matching ctx's and leaves no
	// lock taken: a lease statement already sent is waited for (Settled)
	// and a lock it took is released again.
	Acquire(ctx context.Context, name string, opts Options) (Lease, error)
}

// Lease is one held lock. Its methods are safe for concurrent use.
type Lease interface {
	// Name is the lock name as the caller gave it.
	Name() string
	// Owner identifies the holder (Options.Owner or a generated one).
	Owner() string
	// Token returns the fencing token and true, or 0 and false when the
	// strategy or schema has none.
	Token() (int64, bool)
	// Until is the host-clock instant by which the lease ends unless it is
	// refreshed; it is computed conservatively (from before the statement was
	// sent). The zero time means no lease end (session locks).
	Until() time.Time
	// Refresh extends the lease by the acquire-time AtMost from the database's
	// now (table) or proves the lock is still held (session). It fails with
	// ErrLeaseLost when the lease is gone and ErrNotOwner when another owner
	// holds it.
	Refresh(ctx context.Context) error
	// Release gives the lock up, keeping it until locked-at + AtLeast: in
	// the lease where the strategy has one, else (session locks) held by
	// this process on its connection and freed there in the background
	// once AtLeast has passed (Release returns at once; a process that
	// exits, or a connection that drops, frees it sooner). It fails with
	// ErrLeaseLost when the lease was lost before and ErrNotOwner when
	// another owner holds it. Releasing twice fails with ErrLeaseLost.
	Release(ctx context.Context) error
	// Done is closed when the lease ends: released, or lost.
	Done() <-chan struct{}
	// Err is nil while the lease is held and after a clean Release; once Done
	// is closed by a loss it matches ErrLeaseLost and says why.
	Err() error
}

// Options tune one Acquire. The zero value means: one try, a 30-minute lease,
// no at-least, a generated owner.
type Options struct {
	// AtMost bounds a hold that is never refreshed (default DefaultAtMost).
	// Refresh extends by this amount. Table strategy only; ignored by session
	// locks, which end when their connection does.
	AtMost time.Duration
	// AtLeast keeps the lock after an early Release until locked-at + AtLeast
	// (default 0), on every strategy: session locks are kept by this
	// process for as long as it runs (see Freed). Must not exceed AtMost.
	AtLeast time.Duration
	// Wait is how long Acquire keeps retrying a taken lock (default 0: once).
	Wait time.Duration
	// RetryEvery is the pause between tries while waiting (default 100ms).
	RetryEvery time.Duration
	// Owner is recorded as the holder (default NewOwner()).
	Owner string
}

// DefaultAtMost is the lease length when Options.AtMost is zero.
const DefaultAtMost = 30 * time.Minute

// DefaultRetryEvery is the pause between tries when Options.RetryEvery is zero.
const DefaultRetryEvery = 100 * time.Millisecond

// Normalize validates o and fills in the defaults. It returns an error
// matching ErrInvalid for negative durations, AtLeast > AtMost, or an owner
// that CheckOwner refuses.
func (o Options) Normalize() (Options, error) {
	switch {
	case o.AtMost < 0:
		return o, invalidf("at-most must not be negative, got %s", o.AtMost)
	case o.AtLeast < 0:
		return o, invalidf("at-least must not be negative, got %s", o.AtLeast)
	case o.Wait < 0:
		return o, invalidf("wait must not be negative, got %s", o.Wait)
	case o.RetryEvery < 0:
		return o, invalidf("retry interval must not be negative, got %s", o.RetryEvery)
	}
	if o.Owner != "" {
		if err := CheckOwner(o.Owner); err != nil {
			return o, err
		}
	}
	if o.AtMost == 0 {
		o.AtMost = DefaultAtMost
	}
	if o.AtLeast > o.AtMost {
		return o, invalidf("at-least (%s) must not exceed at-most (%s)", o.AtLeast, o.AtMost)
	}
	if o.RetryEvery == 0 {
		o.RetryEvery = DefaultRetryEvery
	}
	if o.Owner == "" {
		o.Owner = NewOwner()
	}
	return o, nil
}

// MaxOwnerBytes is the longest owner a lock records (the owner columns of
// the lock-table presets are VARCHAR(255)).
const MaxOwnerBytes = 255

// CheckName returns an error matching ErrInvalid for a name no lock may
// have, on any backend: empty, not valid UTF-8, holding a NUL byte (servers
// cut C strings there, so "x\x00y" would be the lock "x"), or only white
// space. The message does not quote the name.
func CheckName(name string) error {
	if name == "" {
		return invalidf("lock name is empty: give a non-empty name")
	}
	if why := badText(name); why != "" {
		return invalidf("lock name %s: give a name of printable UTF-8 text", why)
	}
	return nil
}

// CheckOwner returns an error matching ErrInvalid for an owner no lock may
// record: one CheckName would refuse as a name (an empty owner is refused
// too; Options.Normalize generates one instead), or longer than
// MaxOwnerBytes. The message does not quote the owner.
func CheckOwner(owner string) error {
	if owner == "" {
		return invalidf("owner is empty: give the holder's identity")
	}
	if why := badText(owner); why != "" {
		return invalidf("owner %s: give an owner of printable UTF-8 text", why)
	}
	if len(owner) > MaxOwnerBytes {
		return invalidf("owner is %d bytes, at most %d are allowed", len(owner), MaxOwnerBytes)
	}
	return nil
}

// badText says what is wrong with a non-empty name or owner, or "".
func badText(s string) string {
	switch {
	case !validUTF8(s):
		return "is not valid UTF-8"
	case strings.IndexByte(s, 0) >= 0:
		return "contains a NUL byte"
	case strings.TrimFunc(s, unicode.IsSpace) == "":
		return "is only white space"
	}
	return ""
}

// HandleOptions checks the arguments of a LeaseLocker's Handle and
// returns opts normalised for it: name as CheckName wants it, owner
// non-empty and as CheckOwner wants it, token not negative (0: not
// compared). opts supplies AtMost and AtLeast; its Owner becomes owner.
func HandleOptions(name, owner string, token int64, opts Options) (Options, error) {
	if err := CheckName(name); err != nil {
		return opts, err
	}
	if owner == "" {
		return opts, invalidf("owner is empty: a handle acts for the holder, give its owner")
	}
	if err := CheckOwner(owner); err != nil {
		return opts, err
	}
	if token < 0 {
		return opts, invalidf("token must not be negative, got %d", token)
	}
	opts.Owner = owner
	return opts.Normalize()
}
