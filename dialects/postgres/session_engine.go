package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/schedlock/schedlock/dialects/sqlkit"
)

var (
	_ sqlkit.SessionPreparer = SessionOps{}
	_ sqlkit.SessionWaiter   = SessionOps{}
	_ sqlkit.SessionKeyer    = SessionOps{}
	_ sqlkit.SessionGuard    = SessionOps{}
	_ sqlkit.SessionSocket   = SessionOps{}
)

// SQLSTATE codes of the blocking wait and the session guard.
const (
	codeUnknownSetting = "42704" // a setting this server does not have
)

// LockKey is the advisory key of name in decimal: two names with one key
// are one lock.
func (o SessionOps) LockKey(name string) string { return strconv.FormatInt(o.key(name), 10) }

// lockSQL waits for the key under a lock_timeout set for this statement's
// own transaction only (set_config(..., true) in the implicit transaction
// of one statement), so the session's lock_timeout is back to what it was
// when the statement ends, granted or not. The fenced subquery (OFFSET 0)
// sets it before the lock function runs.
func (c Catalog) lockSQL() string {
	lock := strings.Replace(c.TryLock, "try_", "", 1)
	return "SELECT " + lock + "($2::bigint), t.s FROM (SELECT set_config('lock_timeout', $1, true) AS s OFFSET 0) AS t"
}

// Lock waits on the server for the advisory lock of name: pg_advisory_lock
// under lock_timeout = wait (at least 1 ms; 0 would mean forever). It
// answers false when the timeout ran out (SQLSTATE 55P03). Cancelling ctx
// stops the wait (the SessionLocker then drops the connection).
func (o SessionOps) Lock(ctx context.Context, conn *sql.Conn, name string, wait time.Duration) (bool, error) {
	ms := wait.Milliseconds()
	if ms < 1 {
		ms = 1
	}
	if ms > math.MaxInt32 {
		ms = math.MaxInt32
	}
	_, err := conn.ExecContext(ctx, o.names().lockSQL(), strconv.FormatInt(ms, 10), o.key(name))
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == codeLockNotAvailable:
		return false, nil
	case err != nil:
		return false, fmt.Errorf("%s: %w", strings.Replace(o.names().TryLock, "try_", "", 1), err)
	}
	return true, nil
}

// guardSQL sets one setting of the session guard for the session.
const guardSQL = "SELECT set_config($1, $2, false)"

// guardAllSQL sets the n settings of the session guard in one statement,
// the settings and values as $1..$2n.
func guardAllSQL(n int) string {
	var b strings.Builder
	b.WriteString("SELECT ")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "set_config($%d, $%d, false)", 2*i+1, 2*i+2)
	}
	return b.String()
}

// Guard asks the server to end the lock connection within bound of its
// client going silent: TCP keepalives after bound/3 idle, probes every
// bound/9, three of them (a vanished host), tcp_user_timeout = bound
// (unacknowledged data), and idle_session_timeout = bound (PostgreSQL 14+:
// a client whose packets no longer arrive, the SessionLocker pinging every
// idle connection far more often). The settings go in one statement; on a
// server that lacks one of them (older versions) they are set one by one,
// the missing ones skipped. Keepalives do not apply to a Unix socket.
func (o SessionOps) Guard(ctx context.Context, conn *sql.Conn, bound time.Duration) error {
	secs := func(d time.Duration) string { return strconv.FormatInt(max(1, int64(d/time.Second)), 10) }
	settings := [][2]string{
		{"tcp_keepalives_idle", secs(bound / 3)},
		{"tcp_keepalives_interval", secs(bound / 9)},
		{"tcp_keepalives_count", "3"},
		{"tcp_user_timeout", strconv.FormatInt(max(1, bound.Milliseconds()), 10)},
		{"idle_session_timeout", strconv.FormatInt(max(1, bound.Milliseconds()), 10)},
	}
	args := make([]any, 0, 2*len(settings))
	for _, s := range settings {
		args = append(args, s[0], s[1])
	}
	_, err := conn.ExecContext(ctx, guardAllSQL(len(settings)), onceOn(conn, args...)...)
	var pgErr *pgconn.PgError
	if err == nil || !(errors.As(err, &pgErr) && pgErr.Code == codeUnknownSetting) {
		if err != nil {
			return fmt.Errorf("set the session guard: %w", err)
		}
		return nil
	}
	for _, s := range settings {
		_, err := conn.ExecContext(ctx, guardSQL, s[0], s[1])
		if err != nil && !(errors.As(err, &pgErr) && pgErr.Code == codeUnknownSetting) {
			return fmt.Errorf("set %s: %w", s[0], err)
		}
	}
	return nil
}

// NetConn reaches the socket under a pgx connection.
func (o SessionOps) NetConn(driverConn any) (net.Conn, bool) {
	c, ok := driverConn.(*stdlib.Conn)
	if !ok {
		return nil, false
	}
	nc := c.Conn().PgConn().Conn()
	return nc, nc != nil
}

// Ping proves the session answers with pgconn's own ping, which returns
// the server's error (a FATAL "terminating connection due to administrator
// command", an idle_session_timeout) where database/sql's Ping through
// pgx's stdlib answers only driver.ErrBadConn.
func (o SessionOps) Ping(ctx context.Context, conn *sql.Conn) error {
	pgx := false
	err := conn.Raw(func(driverConn any) error {
		c, ok := driverConn.(*stdlib.Conn)
		if !ok {
			return nil
		}
		pgx = true
		return c.Conn().PgConn().Ping(ctx)
	})
	if !pgx && err == nil {
		return conn.PingContext(ctx)
	}
	return err
}

// Prepare makes the lock statements of conn: on a pgx connection they go
// through pgx itself and are prepared on their second use (pgxSession);
// on a pool of another driver the three lock statements and the two batch
// ones are prepared now through database/sql.
func (o SessionOps) Prepare(ctx context.Context, conn *sql.Conn) (sqlkit.SessionStatements, error) {
	c := o.names()
	if err := o.checkDerivation(ctx, conn); err != nil {
		return nil, err
	}
	if s, ok := newPgxSession(conn, c, o.key); ok {
		return s, nil
	}
	s := &preparedSession{keyOf: o.key}
	var err error
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{{&s.try, c.tryLockSQL()}, {&s.unlock, c.unlockSQL()}, {&s.holds, c.holdsSQL()}} {
		if *p.stmt, err = conn.PrepareContext(ctx, p.sql); err != nil {
			_ = s.Close()
			return nil, err
		}
	}
	// The batch statements are an optimisation: a server that cannot
	// prepare them (an older fork) is driven one lock at a time.
	tryMany, err1 := conn.PrepareContext(ctx, c.tryLockManySQL())
	unlockMany, err2 := conn.PrepareContext(ctx, c.unlockManySQL())
	if err1 == nil && err2 == nil {
		s.tryMany, s.unlockMany = tryMany, unlockMany
	} else {
		for _, st := range []*sql.Stmt{tryMany, unlockMany} {
			if st != nil {
				_ = st.Close()
			}
		}
	}
	s.catalog = c
	if s.tryMany == nil {
		return singleSession{s}, nil
	}
	return s, nil
}

// tryLockManySQL takes every key of the array $1, answering each key
// with its result (one statement: one transaction end for the batch).
func (c Catalog) tryLockManySQL() string {
	return "SELECT t.k, " + c.TryLock + "(t.k) FROM unnest($1::bigint[]) AS t(k)"
}

// unlockManySQL frees every key of the array $1 like tryLockManySQL
// takes them.
func (c Catalog) unlockManySQL() string {
	return "SELECT t.k, " + c.Unlock + "(t.k) FROM unnest($1::bigint[]) AS t(k)"
}

// singleSession is a preparedSession without batch statements.
type singleSession struct{ p *preparedSession }

func (s singleSession) TryLock(ctx context.Context, name string) (bool, error) {
	return s.p.TryLock(ctx, name)
}
func (s singleSession) Unlock(ctx context.Context, name string) (bool, error) {
	return s.p.Unlock(ctx, name)
}
func (s singleSession) Holds(ctx context.Context, name string) (bool, error) {
	return s.p.Holds(ctx, name)
}
func (s singleSession) Close() error { return s.p.Close() }

// TryLockMany takes the keys of names in one statement.
func (s *preparedSession) TryLockMany(ctx context.Context, names []string) ([]bool, error) {
	results, err := s.many(ctx, s.tryMany, names)
	if err != nil {
		return nil, fmt.Errorf("%s of %d keys: %w", s.catalog.TryLock, len(names), err)
	}
	return results, nil
}

// UnlockMany frees the keys of names in one statement.
func (s *preparedSession) UnlockMany(ctx context.Context, names []string) ([]bool, error) {
	results, err := s.many(ctx, s.unlockMany, names)
	if err != nil {
		return nil, fmt.Errorf("%s of %d keys: %w", s.catalog.Unlock, len(names), err)
	}
	return results, nil
}

// many runs a batch statement on the keys of names and maps its answers
// back to them. The SessionLocker never puts one key twice in a batch.
func (s *preparedSession) many(ctx context.Context, stmt *sql.Stmt, names []string) ([]bool, error) {
	keys := make([]int64, len(names))
	for i, name := range names {
		keys[i] = s.keyOf(name)
	}
	rows, err := stmt.QueryContext(ctx, keys)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	answers := make(map[int64]bool, len(keys))
	for rows.Next() {
		var k int64
		var ok bool
		if err := rows.Scan(&k, &ok); err != nil {
			return nil, err
		}
		answers[k] = ok
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	results := make([]bool, len(keys))
	for i, k := range keys {
		got, found := answers[k]
		if !found {
			return nil, fmt.Errorf("no answer for key %d", k)
		}
		results[i] = got
	}
	return results, nil
}

// preparedSession is SessionOps prepared on one lock connection.
type preparedSession struct {
	catalog             Catalog
	keyOf               func(name string) int64 // SessionOps.key
	try, unlock, holds  *sql.Stmt
	tryMany, unlockMany *sql.Stmt // nil when the server could not prepare them
}

func (s *preparedSession) TryLock(ctx context.Context, name string) (bool, error) {
	var ok bool
	if err := s.try.QueryRowContext(ctx, s.keyOf(name)).Scan(&ok); err != nil {
		return false, fmt.Errorf("%s: %w", s.catalog.TryLock, err)
	}
	return ok, nil
}

func (s *preparedSession) Unlock(ctx context.Context, name string) (bool, error) {
	var ok bool
	if err := s.unlock.QueryRowContext(ctx, s.keyOf(name)).Scan(&ok); err != nil {
		return false, fmt.Errorf("%s: %w", s.catalog.Unlock, err)
	}
	return ok, nil
}

func (s *preparedSession) Holds(ctx context.Context, name string) (bool, error) {
	classid, objid := KeyParts(s.keyOf(name))
	var held bool
	if err := s.holds.QueryRowContext(ctx, int64(classid), int64(objid)).Scan(&held); err != nil {
		return false, fmt.Errorf("read %s: %w", s.catalog.Locks, err)
	}
	return held, nil
}

func (s *preparedSession) Close() error {
	for _, st := range []*sql.Stmt{s.try, s.unlock, s.holds, s.tryMany, s.unlockMany} {
		if st != nil {
			_ = st.Close()
		}
	}
	return nil
}
