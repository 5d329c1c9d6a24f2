package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"net"
	"reflect"
	"strconv"
	"time"
	"unsafe"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

var (
	_ sqlkit.SessionPreparer = (*SessionOps)(nil)
	_ sqlkit.SessionWaiter   = (*SessionOps)(nil)
	_ sqlkit.SessionKeyer    = (*SessionOps)(nil)
	_ sqlkit.SessionGuard    = (*SessionOps)(nil)
	_ sqlkit.SessionSocket   = (*SessionOps)(nil)
)

// LockKey is the name the server locks (serverName). Spellings a server
// may fold together (MariaDB's documentation calls GET_LOCK names
// case-insensitive, though MariaDB 10.11 keeps "A" and "a" apart) are
// kept apart by tryLockSQL's guard on one connection and by the server
// across connections.
func (o *SessionOps) LockKey(name string) string { return o.serverName(name) }

// Lock waits on the server: GET_LOCK(name, wait). MariaDB takes the
// timeout with microseconds; MySQL is given whole seconds, rounded up.
// Cancelling ctx makes the driver close the connection (which the
// SessionLocker runs on a connection of its own for this reason).
func (o *SessionOps) Lock(ctx context.Context, conn *sql.Conn, name string, wait time.Duration) (bool, error) {
	timeout := wait.Seconds()
	if o.Info.Product != dialects.ProductMariaDB {
		timeout = math.Ceil(timeout)
	}
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, lockSQL, o.serverName(name), timeout).Scan(&got); err != nil {
		return false, fmt.Errorf("GET_LOCK: %w", err)
	}
	if !got.Valid {
		return false, fmt.Errorf("GET_LOCK returned NULL (error in the server, e.g. the statement was killed)")
	}
	return got.Int64 == 1, nil
}

// Guard sets the session's wait_timeout to bound (whole seconds, at least
// one): a connection that sends nothing for that long (its client gone,
// or cut off by a silent partition) is closed by the server, which frees
// its locks. The SessionLocker pings an idle lock connection far more
// often.
func (o *SessionOps) Guard(ctx context.Context, conn *sql.Conn, bound time.Duration) error {
	secs := max(1, int64(math.Ceil(bound.Seconds())))
	// The number is schedlock's own, written into the text: one command
	// whether or not the DSN interpolates parameters (a bound one would
	// cost a prepare, an execute and a close without interpolation).
	if _, err := conn.ExecContext(ctx, guardSQL+strconv.FormatInt(secs, 10)); err != nil {
		return fmt.Errorf("set wait_timeout: %w", err)
	}
	return nil
}

// NetConn reaches the socket under a go-sql-driver connection. The driver
// keeps it in an unexported field (rawConn under TLS, else netConn) and
// offers no accessor; a custom dialer would need the DSN, which a locker
// given a *sql.DB does not have, and mysql.RegisterDialContext would
// change every connection of the process. So the field is read by
// reflection, read-only, and when it is absent (another driver version)
// the lock connection is watched by its pings alone.
func (o *SessionOps) NetConn(driverConn any) (net.Conn, bool) {
	v := reflect.ValueOf(driverConn)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	v = v.Elem()
	for _, field := range []string{"rawConn", "netConn"} {
		f := v.FieldByName(field)
		if !f.IsValid() || f.Kind() != reflect.Interface || f.IsNil() {
			continue
		}
		nc, ok := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Interface().(net.Conn)
		if ok {
			return nc, true
		}
	}
	return nil, false
}

// Prepare makes the lock statements of conn: on the driver's connection
// directly (driverSession: text queries with interpolateParams, else each
// statement prepared on its first use); where the driver connection cannot
// be reached, the three lock statements prepared now through database/sql.
// Either way an operation is one command.
func (o *SessionOps) Prepare(ctx context.Context, conn *sql.Conn) (sqlkit.SessionStatements, error) {
	if s, ok := newDriverSession(conn, *o); ok {
		return s, nil
	}
	s := &preparedSession{ops: *o}
	var err error
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{{&s.try, tryLockSQL}, {&s.unlock, unlockSQL}, {&s.holds, holdsSQL}} {
		if *p.stmt, err = conn.PrepareContext(ctx, p.sql); err != nil {
			_ = s.Close()
			return nil, err
		}
	}
	return s, nil
}

// preparedSession is SessionOps prepared on one lock connection.
type preparedSession struct {
	try, unlock, holds *sql.Stmt
	ops                SessionOps // the scope and mode of serverName
}

func (s *preparedSession) TryLock(ctx context.Context, name string) (bool, error) {
	mapped := s.ops.serverName(name)
	return scanTryLock(s.try.QueryRowContext(ctx, mapped, mapped))
}

func (s *preparedSession) Unlock(ctx context.Context, name string) (bool, error) {
	var released sql.NullInt64
	if err := s.unlock.QueryRowContext(ctx, s.ops.serverName(name)).Scan(&released); err != nil {
		return false, fmt.Errorf("RELEASE_LOCK: %w", err)
	}
	return released.Valid && released.Int64 == 1, nil
}

func (s *preparedSession) Holds(ctx context.Context, name string) (bool, error) {
	var mine sql.NullBool
	if err := s.holds.QueryRowContext(ctx, s.ops.serverName(name)).Scan(&mine); err != nil {
		return false, fmt.Errorf("IS_USED_LOCK: %w", err)
	}
	return mine.Valid && mine.Bool, nil
}

func (s *preparedSession) Close() error {
	for _, st := range []*sql.Stmt{s.try, s.unlock, s.holds} {
		if st != nil {
			_ = st.Close()
		}
	}
	return nil
}
