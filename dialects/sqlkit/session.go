package sqlkit

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"net"
	"time"
)

// SessionOps is what a database provides for connection-bound named locks.
// Each method runs exactly one statement on conn.
type SessionOps interface {
	// TryLock tries once, without waiting, to take name in conn's session.
	// It answers false when another session holds the lock, and also when
	// conn's own session already holds it under a name the server folds to
	// the same lock (a lock is never taken twice in one session).
	TryLock(ctx context.Context, conn *sql.Conn, name string) (bool, error)
	// Unlock releases name in conn's session; false when that session did
	// not hold it (another session's lock is never freed).
	Unlock(ctx context.Context, conn *sql.Conn, name string) (bool, error)
	// Holds reports whether conn's session holds name.
	Holds(ctx context.Context, conn *sql.Conn, name string) (bool, error)
}

// SessionStatements are the lock statements of one lock connection,
// prepared on it once, so that every operation is one round trip whatever
// the driver's settings. They are only ever used by one goroutine at a
// time.
type SessionStatements interface {
	TryLock(ctx context.Context, name string) (bool, error)
	Unlock(ctx context.Context, name string) (bool, error)
	Holds(ctx context.Context, name string) (bool, error)
	// Close frees the prepared statements.
	Close() error
}

// SessionPreparer is implemented by SessionOps that prepare their
// statements on a lock connection (see SessionStatements). Without it the
// SessionLocker runs the SessionOps methods on the connection.
type SessionPreparer interface {
	Prepare(ctx context.Context, conn *sql.Conn) (SessionStatements, error)
}

// SessionWaiter is implemented by SessionOps whose database can wait for a
// lock on the server (pg_advisory_lock under lock_timeout, GET_LOCK with a
// timeout, sp_getapplock @LockTimeout, DBMS_LOCK.REQUEST with a timeout).
// Lock waits up to wait for name in conn's session and answers false when
// the lock stayed taken. The SessionLocker runs it on a connection that
// holds no lock, and discards that connection if ctx ends during the wait.
// Without it a waiting Acquire retries every Options.RetryEvery.
type SessionWaiter interface {
	Lock(ctx context.Context, conn *sql.Conn, name string, wait time.Duration) (bool, error)
}

// StatementWaiter is implemented by SessionStatements that can run the
// server-side wait of SessionWaiter on their own prepared statement. The
// SessionLocker uses it in preference to SessionWaiter.Lock.
type StatementWaiter interface {
	Lock(ctx context.Context, name string, wait time.Duration) (bool, error)
}

// SessionKeyer is implemented by SessionOps whose server identifies a lock
// by something other than its name (PostgreSQL: the bigint key; MySQL and
// SQL Server: the mapped name). Two names with one key are one lock; the
// SessionLocker excludes them from each other inside the process too.
type SessionKeyer interface {
	LockKey(name string) string
}

// SessionGuard is implemented by SessionOps that can ask the server to end
// a lock connection whose client has vanished (PostgreSQL TCP keepalives
// and idle_session_timeout, MySQL wait_timeout). Guard runs once on every
// new lock connection; the server should free its locks within bound of
// the last statement it received. The SessionLocker pings every idle lock
// connection well inside that bound.
type SessionGuard interface {
	Guard(ctx context.Context, conn *sql.Conn, bound time.Duration) error
}

// SessionSocket is implemented by SessionOps that can reach the network
// connection under a driver connection (the value sql.Conn.Raw passes),
// so that an idle lock connection is watched by a blocking read and its
// loss is known at once instead of at the next ping. It answers false
// when the driver hides it.
type SessionSocket interface {
	NetConn(driverConn any) (net.Conn, bool)
}

// SessionPinger is implemented by SessionOps whose driver hides the
// server's reason when a ping fails (pgx answers driver.ErrBadConn for any
// failed Ping). Ping runs the cheapest statement on conn and returns the
// server's own error: "terminating connection due to administrator
// command", an idle-session timeout. The lock connection's liveness checks
// use it instead of sql.Conn.PingContext, so that a lost lease says why.
type SessionPinger interface {
	Ping(ctx context.Context, conn *sql.Conn) error
}

// discard closes conn's physical connection instead of returning it to the
// pool: whatever lock it might hold goes with it.
func discard(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	_ = conn.Close()
}

// boundStatements adapts SessionOps without SessionPreparer to
// SessionStatements on one connection.
type boundStatements struct {
	ops  SessionOps
	conn *sql.Conn
}

func (b boundStatements) TryLock(ctx context.Context, name string) (bool, error) {
	return b.ops.TryLock(ctx, b.conn, name)
}

func (b boundStatements) Unlock(ctx context.Context, name string) (bool, error) {
	return b.ops.Unlock(ctx, b.conn, name)
}

func (b boundStatements) Holds(ctx context.Context, name string) (bool, error) {
	return b.ops.Holds(ctx, b.conn, name)
}

func (b boundStatements) Close() error { return nil }
