package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/schedlock/schedlock/dialects/sqlkit"
)

var (
	_ sqlkit.SessionStatements = (*pgxSession)(nil)
	_ sqlkit.SessionBatcher    = (*pgxSession)(nil)
	_ sqlkit.StatementWaiter   = (*pgxSession)(nil)
)

// pgxSession is SessionOps on one lock connection, sent through the pgx
// connection under it (*pgx.Conn) rather than database/sql's layers: a
// statement is one round trip and allocates what pgx's own QueryRow does.
//
// A statement is prepared only when it is used a second time on the
// connection: its first use runs unprepared in one round trip
// (pgx.QueryExecModeExec), later ones through pgx's statement cache (or
// the mode the connection string asks for, default_query_exec_mode). So a
// lock connection that takes one lock and frees it, as `schedlock run`
// does, prepares nothing, and one that serves many prepares each
// statement once.
//
// The *sql.Conn it came from stays pinned to the lock connection for its
// whole life and every statement runs under the lock connection's turn
// (sqlkit's lockConn), so nothing else uses the pgx connection meanwhile.
type pgxSession struct {
	conn    *pgx.Conn
	catalog Catalog
	keyOf   func(name string) int64
	// reuse is the mode of a statement's second and later uses.
	reuse pgx.QueryExecMode

	try, unlock, holds, tryMany, unlockMany, lock lazyStatement
	// args is reused by every statement (one goroutine at a time).
	args [3]any
}

// lazyStatement is one statement of a pgxSession and whether it ran.
type lazyStatement struct {
	sql  string
	used bool
}

// newPgxSession returns the pgx session on conn, or false when conn is not
// a pgx connection (a pool of another driver given to New).
func newPgxSession(conn *sql.Conn, c Catalog, keyOf func(string) int64) (*pgxSession, bool) {
	var pc *pgx.Conn
	_ = conn.Raw(func(dc any) error {
		if s, ok := dc.(*stdlib.Conn); ok {
			pc = s.Conn()
		}
		return nil
	})
	if pc == nil {
		return nil, false
	}
	reuse := pc.Config().DefaultQueryExecMode
	s := &pgxSession{conn: pc, catalog: c, keyOf: keyOf, reuse: reuse,
		try: lazyStatement{sql: c.tryLockSQL()}, unlock: lazyStatement{sql: c.unlockSQL()}, holds: lazyStatement{sql: c.holdsSQL()},
		tryMany: lazyStatement{sql: c.tryLockManySQL()}, unlockMany: lazyStatement{sql: c.unlockManySQL()}, lock: lazyStatement{sql: c.lockSQL()}}
	return s, true
}

// mode is how st runs now: unprepared on its first use (unless the
// connection asks for the simple protocol everywhere), as the connection
// asks for afterwards.
func (s *pgxSession) mode(st *lazyStatement) pgx.QueryExecMode {
	if st.used || s.reuse == pgx.QueryExecModeSimpleProtocol {
		return s.reuse
	}
	st.used = true
	return pgx.QueryExecModeExec
}

// bool runs st with args and scans its one boolean.
func (s *pgxSession) bool(ctx context.Context, st *lazyStatement, args ...any) (bool, error) {
	var ok bool
	s.args[0] = s.mode(st)
	n := copy(s.args[1:], args)
	err := s.conn.QueryRow(ctx, st.sql, s.args[:n+1]...).Scan(&ok)
	clear(s.args[:])
	return ok, err
}

func (s *pgxSession) TryLock(ctx context.Context, name string) (bool, error) {
	ok, err := s.bool(ctx, &s.try, s.keyOf(name))
	if err != nil {
		return false, fmt.Errorf("%s: %w", s.catalog.TryLock, err)
	}
	return ok, nil
}

func (s *pgxSession) Unlock(ctx context.Context, name string) (bool, error) {
	ok, err := s.bool(ctx, &s.unlock, s.keyOf(name))
	if err != nil {
		return false, fmt.Errorf("%s: %w", s.catalog.Unlock, err)
	}
	return ok, nil
}

func (s *pgxSession) Holds(ctx context.Context, name string) (bool, error) {
	classid, objid := KeyParts(s.keyOf(name))
	held, err := s.bool(ctx, &s.holds, int64(classid), int64(objid))
	if err != nil {
		return false, fmt.Errorf("read %s: %w", s.catalog.Locks, err)
	}
	return held, nil
}

// Lock implements sqlkit.StatementWaiter: SessionOps.Lock's wait on the
// server, on the pgx connection.
func (s *pgxSession) Lock(ctx context.Context, name string, wait time.Duration) (bool, error) {
	ms := min(max(wait.Milliseconds(), 1), math.MaxInt32)
	_, err := s.conn.Exec(ctx, s.lock.sql, s.mode(&s.lock), strconv.FormatInt(ms, 10), s.keyOf(name))
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == codeLockNotAvailable:
		return false, nil
	case err != nil:
		return false, fmt.Errorf("%s: %w", strings.Replace(s.catalog.TryLock, "try_", "", 1), err)
	}
	return true, nil
}

// TryLockMany implements sqlkit.SessionBatcher.
func (s *pgxSession) TryLockMany(ctx context.Context, names []string) ([]bool, error) {
	results, err := s.many(ctx, &s.tryMany, names)
	if err != nil {
		return nil, fmt.Errorf("%s of %d keys: %w", s.catalog.TryLock, len(names), err)
	}
	return results, nil
}

// UnlockMany implements sqlkit.SessionBatcher.
func (s *pgxSession) UnlockMany(ctx context.Context, names []string) ([]bool, error) {
	results, err := s.many(ctx, &s.unlockMany, names)
	if err != nil {
		return nil, fmt.Errorf("%s of %d keys: %w", s.catalog.Unlock, len(names), err)
	}
	return results, nil
}

// many runs a batch statement on the keys of names and maps its answers
// back to them. The SessionLocker never puts one key twice in a batch.
func (s *pgxSession) many(ctx context.Context, st *lazyStatement, names []string) ([]bool, error) {
	keys := make([]int64, len(names))
	for i, name := range names {
		keys[i] = s.keyOf(name)
	}
	rows, err := s.conn.Query(ctx, st.sql, s.mode(st), keys)
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

// Close forgets nothing: the prepared statements live in the pgx
// connection's cache and go with the connection.
func (s *pgxSession) Close() error { return nil }
