package dialects

import (
	"context"
	"errors"
)

// Backend is one opened database: what detection learned about it and the
// lockers on it. It owns its connections; Close releases them. The
// contract assumes no database/sql: a key-value store implements it as
// well as a SQL server (the SQL family's is *DB).
//
// The command line reaches everything beyond locking through the optional
// interfaces LockLister, LockBreaker and Prober, asserted on the Backend.
type Backend interface {
	// Detected is what detection learned about the database, once, when
	// it was opened.
	Detected() Info
	// Locker returns the locker for strategy; t is the lock table of the
	// table strategy (ignored by the session strategy). A strategy the
	// database cannot do gives an error matching ErrUnsupported.
	Locker(strategy Strategy, t Table) (Locker, error)
	// Recommend picks the lock strategy for this database and says why.
	Recommend() (Strategy, string)
	// Close releases the backend's connections. Leases still held on it
	// end; calling Close twice is safe.
	Close() error
}

// LockLister is implemented by backends that can list their locks
// (`schedlock locks ls`).
type LockLister interface {
	// ListLocks lists the locks opts selects, sorted.
	ListLocks(ctx context.Context, opts ListOptions) (*Listing, error)
	// FindLock lists every lock called name: session locks and the rows of
	// tables (found as ListLocks does when tables is empty).
	FindLock(ctx context.Context, name string, tables []Table) (*Listing, error)
}

// LockBreaker is implemented by backends whose locks an administrator can
// free (`schedlock unlock`): a lease released or expired in its table, a
// Liquibase lock cleared, a session lock's holder terminated.
type LockBreaker interface {
	LockLister
	// LeaseLocker returns the lease-strategy locker for t, for guarded
	// releases through its Handle and forced ones through its Expire.
	LeaseLocker(t Table) (LeaseLocker, error)
	// Liquibase returns the administration of the Liquibase lock table
	// called table (LiquibaseTable when empty).
	Liquibase(table string) (LiquibaseLock, error)
	// LockAdmin returns the session-lock administration (find the holder,
	// terminate it), or nil when the backend has none.
	LockAdmin() LockAdmin
}

// Prober is implemented by backends that can prove what the database can
// do (`schedlock detect`, selfcheck's probe checks).
type Prober interface {
	Probe(ctx context.Context, opts ProbeOptions) (Capabilities, error)
}

// Target is a parsed DSN as a backend's Open receives it.
type Target struct {
	// Scheme is the dburl scheme name, aliases resolved ("postgres").
	Scheme string
	// Conn is the connection string for the driver or backend. It holds
	// the password: never print, log or embed it.
	Conn string
	// Where is the address for messages: host:port, a socket, a file.
	Where string
	// Path is the file of a file database; empty for servers.
	Path string
	// Options are the x- options of the DSN, by name without the prefix.
	Options map[string]string
}

// UnreachableError is a database a backend could not reach or log in to
// (as opposed to one that answered wrongly): the DSN layer words it with
// the address and what to check. It unwraps to the cause.
type UnreachableError struct{ Err error }

func (e *UnreachableError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *UnreachableError) Unwrap() error { return e.Err }

// Unreachable wraps err as an *UnreachableError; nil stays nil.
func Unreachable(err error) error {
	if err == nil {
		return nil
	}
	var u *UnreachableError
	if errors.As(err, &u) {
		return err
	}
	return &UnreachableError{Err: err}
}
