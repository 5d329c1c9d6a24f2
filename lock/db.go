package lock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
	"github.com/schedlock/schedlock/internal/dsn"
)

// DefaultApplicationName is the name Open gives the connections it opens
// in the server's own session views (PostgreSQL application_name, the
// MySQL/MariaDB program_name connection attribute, SQL Server app name,
// Oracle program): the program's base name, as `ps` shows it. Set
// another in the DSN (application_name=billing-worker on PostgreSQL,
// connectionAttributes=program_name:billing-worker on MySQL, app+name= on
// SQL Server, PROGRAM= on Oracle): a name the DSN sets always wins.
func DefaultApplicationName() string {
	if len(os.Args) == 0 || os.Args[0] == "" {
		return "schedlock"
	}
	return filepath.Base(os.Args[0])
}

// closeTimeout bounds the releases Close sends for leases still held.
const closeTimeout = 10 * time.Second

// DB is an opened database with the locker its DSN selects. It is a Locker:
// pass it to WithLock, or Acquire on it. It is safe for concurrent use.
type DB struct {
	backend  dialects.Backend
	locker   dialects.Locker
	base     dialects.Locker // the backend's locker, under the pause check and namespace
	strategy Strategy
	owner    string // the holder identity of leases taken without Options.Owner

	mu   sync.Mutex
	held map[*trackedLease]struct{}
	// pruneAt is the size of held at which the next Acquire drops the
	// leases that ended without Release (lost): doubled after each prune,
	// so pruning costs O(1) per Acquire however many leases are held.
	pruneAt int
	closed  bool
	done    chan struct{} // closed when Close has finished
	err     error         // Close's result
}

var _ Locker = (*DB)(nil)

// Open parses dsn (every form the schedlock command takes, with its x-
// options), connects, detects the database and prepares the locker of the
// DSN's strategy: x-strategy, else the backend's recommendation. With
// x-namespace=NS every lock is taken in namespace NS (see WithNamespace;
// on Redis with x-preset=shedlock, NS is ShedLock's environment: the key
// job-lock:NS:NAME, and an x-table naming another environment is
// refused with ErrInvalid).
// With x-time-zone=ZONE a lock table's zone-less times are read and written
// as ZONE's wall-clock time, as a ShedLock JVM there writes them without
// usingDbTime() (see dialects.Table.TimeZone).
// The DSN's backend must be linked into the program: import its package
// for its side effect (import _ "github.com/schedlock/schedlock/dialects/postgres";
// dialects/all links every one). A DSN of a backend that is not linked
// fails with an error matching ErrUnsupported, in one line naming the
// import to add:
//
//	schedlock: no backend linked for "redis://": add import _ "github.com/schedlock/schedlock/dialects/redis"
//
// A DSN no
// backend can open, a server that cannot be reached or a strategy the
// database cannot do fails here, in one line naming the backend and what
// to do. The password never appears in an error. Its connections name
// themselves DefaultApplicationName() unless the DSN names them.
// A SQLite file that does not exist is refused, as the schedlock command
// refuses it, with an error matching fs.ErrNotExist — a mistyped path
// would otherwise lock a new, empty database of its own — unless the DSN
// asks for it to be created with x-create-file=true. A store that can
// hand a lock to two holders (a Redis without persistence, …) is opened
// all the same, and each such risk is logged once as a warning with
// slog.Default(), or handed to OnRisk.
func Open(ctx context.Context, dsnText string, opts ...OpenOption) (*DB, error) {
	var cfg openConfig
	for _, o := range opts {
		o(&cfg)
	}
	target, err := dsn.Parse(dsnText)
	if err != nil {
		var nl *dsn.NotLinkedError
		if errors.As(err, &nl) {
			return nil, fmt.Errorf("schedlock: %w", nl)
		}
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := target.MissingFile(); err != nil {
		return nil, fmt.Errorf("%w: check the path, or add x-create-file=true to the DSN to create it", err)
	}
	// On ShedLock's Redis layout the namespace is the environment, the
	// table (job-lock:NS:NAME); elsewhere it prefixes the lock names.
	table, ns, err := target.PlaceNamespace(target.Options.Table(), target.Options.Namespace())
	if err != nil {
		return nil, target.Scrub(err)
	}
	target.NameConnections(DefaultApplicationName())
	backend, err := target.Connect(ctx)
	if err != nil {
		return nil, err
	}
	strategy := target.Options.Strategy()
	if strategy == "" {
		strategy, _ = backend.Recommend()
	}
	locker, err := backend.Locker(strategy, table)
	if err != nil {
		_ = backend.Close()
		return nil, target.Scrub(fmt.Errorf("%s %s strategy: %w", backend.Detected().Dialect, strategy, err))
	}
	sqlkit.ApplyPartitionBound(locker, target.Options.PartitionBound())
	base := locker
	locker = dialects.WithPauseCheck(backend, locker, table)
	locker = dialects.WithNamespace(locker, ns)
	cfg.reportRisks(ctx, backend)
	return &DB{backend: backend, locker: locker, base: base, strategy: strategy, owner: dialects.NewOwner(), held: map[*trackedLease]struct{}{}, pruneAt: minPruneAt, done: make(chan struct{})}, nil
}

// Info is what detection learned about the database.
func (db *DB) Info() Info { return db.backend.Detected() }

// Strategy reports the strategy of the handle's locker.
func (db *DB) Strategy() Strategy { return db.strategy }

// Acquire takes the lock called name (see Locker). The lease is the
// handle's until released, lost, or Close releases it; the handle forgets
// a lease once it has ended, without a goroutine per lease. A lease taken
// without Options.Owner is held under the handle's own identity (host,
// process id and a random suffix, made by Open), the same for all of its
// leases, so that the table strategy renews many of them with one
// statement.
func (db *DB) Acquire(ctx context.Context, name string, opts Options) (Lease, error) {
	db.mu.Lock()
	closed := db.closed
	db.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("%w: Acquire of %q on a closed lock.DB", ErrInvalid, name)
	}
	if opts.Owner == "" {
		opts.Owner = db.owner
	}
	lease, err := db.locker.Acquire(ctx, name, dialects.Options(opts))
	if err != nil {
		return nil, err
	}
	t := &trackedLease{Lease: lease, db: db}
	db.mu.Lock()
	if db.closed { // Close began while the lock was being taken
		db.mu.Unlock()
		_ = lease.Release(ctx)
		return nil, fmt.Errorf("%w: lock.DB closed while %q was acquired; released it", ErrInvalid, name)
	}
	if len(db.held) >= db.pruneAt {
		db.pruneLocked()
	}
	db.held[t] = struct{}{}
	db.mu.Unlock()
	return t, nil
}

// minPruneAt is the smallest set of tracked leases worth pruning.
const minPruneAt = 64

// pruneLocked drops the leases that have ended (Done closed: lost, or
// released behind the handle's back) and sets the next prune at twice
// what is left. db.mu is held.
func (db *DB) pruneLocked() {
	for t := range db.held {
		select {
		case <-t.Done():
			delete(db.held, t)
		default:
		}
	}
	db.pruneAt = max(2*len(db.held), minPruneAt)
}

// tracked prunes the set of tracked leases and returns its size.
func (db *DB) tracked() int {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.pruneLocked()
	return len(db.held)
}

// CreateTable creates the lease table of the table strategy when it does
// not exist (the x-table/x-preset of the DSN); with the session strategy
// there is nothing to create.
func (db *DB) CreateTable(ctx context.Context) error {
	tl, ok := db.locker.(dialects.TableCreator)
	if !ok {
		return nil
	}
	return tl.CreateTable(ctx)
}

// Close releases every lease still held through this handle, then the
// locker's prepared statements, its lock connections and the connection
// pool. It reports the leases it could not release (their session locks
// end with their connections all the same; a table lease then runs out at
// its AtMost). Session locks released before their AtLeast and still held
// for it are freed at once with their connections, as they would be when
// the process exits, and Close returns once the session locker's
// goroutines and timers have stopped; a table lease keeps its AtLeast on
// the server. Calling Close again returns the first call's result.
func (db *DB) Close() error {
	db.mu.Lock()
	if db.closed {
		db.mu.Unlock()
		<-db.done
		return db.err
	}
	db.closed = true
	db.pruneLocked() // leases already lost need no release
	leases := make([]*trackedLease, 0, len(db.held))
	for t := range db.held {
		leases = append(leases, t)
	}
	db.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	var errs []error
	for _, t := range leases {
		if err := t.Lease.Release(ctx); err != nil && !errors.Is(err, ErrLeaseLost) {
			errs = append(errs, fmt.Errorf("close: release %q: %w", t.Name(), err))
		}
		t.forget()
	}
	if c, ok := db.base.(io.Closer); ok {
		if err := c.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close: locker: %w", err))
		}
	}
	if err := db.backend.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close: %w", err))
	}
	db.err = errors.Join(errs...)
	close(db.done)
	return db.err
}

// trackedLease is a lease the handle releases on Close unless it ended
// before.
type trackedLease struct {
	dialects.Lease
	db *DB
}

// Unwrap returns the backend's lease (see dialects.Freed).
func (t *trackedLease) Unwrap() dialects.Lease { return t.Lease }

// Release implements Lease and forgets the lease once it has ended.
func (t *trackedLease) Release(ctx context.Context) error {
	err := t.Lease.Release(ctx)
	if err == nil || errors.Is(err, ErrLeaseLost) {
		t.forget()
	}
	return err
}

func (t *trackedLease) forget() {
	t.db.mu.Lock()
	delete(t.db.held, t)
	t.db.mu.Unlock()
}
