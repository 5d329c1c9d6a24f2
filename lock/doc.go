// Package lock is schedlock for programs: open a database from a DSN and
// run work under a named lock that at most one process holds at a time.
//
//	import _ "github.com/schedlock/schedlock/dialects/postgres" // the backend of the DSN
//
//	db, err := lock.Open(ctx, "postgres://app@db1/jobs")
//	if err != nil { … }
//	defer db.Close()
//	err = lock.WithLock(ctx, db, "nightly-report", lock.Options{}, func(ctx context.Context, l lock.Lease) error {
//		return report(ctx)
//	})
//	if errors.Is(err, lock.ErrHeld) { … another node runs it … }
//
// The package is called lock because that is what its call sites are
// about: lock.Open, lock.WithLock, lock.Options, lock.ErrHeld read as
// plain English, and the types (lock.Lease, lock.Locker) need no prefix of
// their own. It is the small user API of schedlock; the authoring kit for
// backends (package dialects) and the command line live elsewhere, and
// this package imports neither the command, its checks nor any backend.
//
// A program links the backends it imports and no other, as database/sql
// links the drivers a program imports: dialects/postgres, dialects/mysql,
// dialects/sqlite, dialects/oracle, dialects/sqlserver, dialects/dameng,
// dialects/redis, dialects/etcd, dialects/zookeeper, dialects/memory, or
// dialects/all for every one (the schedlock command imports it). Open of
// a DSN whose backend is not linked fails in one line naming the import
// to add. A program of lock and dialects/postgres links at most 10
// modules and builds to about 11 MB (scripts/size.sh --library).
//
// Open takes every DSN the schedlock command takes, with the same x-
// options: x-strategy=session|table (default: the backend's
// recommendation), x-table and x-preset for the lease table,
// x-namespace=staging to keep one environment's locks apart from another's
// on a shared database (WithNamespace does it for any Locker). The handle
// it returns owns the connection pool, what detection learned, the lease
// table's prepared statements and the connections that hold session locks;
// Close releases the leases still held and then all of those, freeing the
// session locks still kept for their AtLeast at once.
//
// Its connections name themselves in the server's session views
// (pg_stat_activity.application_name, MySQL's program_name connection
// attribute, SQL Server's app name, Oracle's program) after the program:
// DefaultApplicationName, the executable's base name. A name written in
// the DSN (application_name=billing-worker) wins.
//
// Options.AtLeast keeps a lock after a quick run (ShedLock's
// lockAtLeastFor), so that a node whose clock is behind, or whose
// scheduler fires a moment later, finds it taken and skips. It holds on
// every strategy. On the table strategy it is written into the lease and
// kept by the database. On the session strategy, which has no lease, the
// process keeps it: Release (and WithLock after the job) returns at once,
// the lock stays held on its connection until AtLeast has passed since the
// acquire, and is then freed in the background. That hold lasts only as
// long as the process: the server frees a session's locks with the
// session, so Close, or a process that exits, frees it sooner. A program
// that exits right after its job and needs AtLeast kept uses the table
// strategy (x-strategy=table).
//
// A lock paused with `schedlock pause` is refused with an error matching
// both ErrHeld and ErrPaused that names who paused it and until when; a
// paused lock is not waited for. On the session strategy the handle reads
// the lock's row in the DSN's lease table (else the native schedlock
// table) before each Acquire to see a pause: one query more, none when
// that table does not exist.
//
// A store that can hand a lock to a second holder while the first still
// runs — a Redis without persistence, with RDB snapshots only, with an
// evicting maxmemory-policy or asynchronous replicas — opens all the same:
// Open logs each such Risk once as a warning with slog.Default(), or
// hands it to the function given with OnRisk (OnRisk(func(Risk) {}) to
// stay quiet). `schedlock detect` lists the same risks. On Redis the
// fencing token still grows across such a loss (its floor is the server's
// clock), so a resource that refuses older tokens is safe from the first
// holder.
//
// Options, Lease and Locker are this package's own types, documented
// here. A backend's lease is a Lease, and Options converts to the engine's
// dialects.Options and back (lock.Options(o)); the other types (Info,
// Strategy, HeldError, Error, Risk) are aliases of the engine's. The lock
// contract in full (mutual exclusion, leases, owner checks, fencing
// tokens) is documented on package dialects.
package lock
