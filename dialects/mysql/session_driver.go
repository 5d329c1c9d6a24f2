package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

var (
	_ sqlkit.SessionStatements = (*driverSession)(nil)
	_ sqlkit.StatementWaiter   = (*driverSession)(nil)
)

// driverSession is SessionOps on one lock connection, sent through the
// driver's own connection under it (the driver.Conn that sql.Conn.Raw
// reaches) rather than database/sql's layers: one command per operation,
// and the allocations of the driver alone.
//
// With interpolateParams (the default of every DSN schedlock opens) a
// statement is one text query and nothing is prepared; without it a
// statement is prepared on its first use and kept for the next ones, so
// each operation is one command after that.
//
// The *sql.Conn it came from stays pinned to the lock connection for its
// whole life and every statement runs under the lock connection's turn
// (sqlkit's lockConn), so nothing else uses the driver connection
// meanwhile.
type driverSession struct {
	conn  driver.Conn
	query driver.QueryerContext
	ops   SessionOps // the scope and mode of serverName
	// prepared are the statements the driver would not run as text
	// (interpolateParams off), by SQL text.
	prepared map[string]driver.Stmt
	args     [2]driver.NamedValue
}

// newDriverSession returns the driver session on conn, or false when its
// driver connection cannot run a query directly.
func newDriverSession(conn *sql.Conn, ops SessionOps) (*driverSession, bool) {
	var s *driverSession
	_ = conn.Raw(func(dc any) error {
		c, ok := dc.(driver.Conn)
		q, qok := dc.(driver.QueryerContext)
		if ok && qok {
			s = &driverSession{conn: c, query: q, ops: ops}
		}
		return nil
	})
	return s, s != nil
}

// int runs query with args and reads its one integer column (valid false
// for NULL).
func (s *driverSession) int(ctx context.Context, query string, args ...driver.Value) (n int64, valid bool, err error) {
	named := s.args[:len(args)]
	for i, a := range args {
		named[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	defer clear(s.args[:])
	var rows driver.Rows
	if st, ok := s.prepared[query]; ok {
		rows, err = st.(driver.StmtQueryContext).QueryContext(ctx, named)
	} else {
		rows, err = s.query.QueryContext(ctx, query, named)
		if errors.Is(err, driver.ErrSkip) {
			rows, err = s.prepare(ctx, query, named)
		}
	}
	if err != nil {
		return 0, false, err
	}
	dest := []driver.Value{nil}
	err = rows.Next(dest)
	closeErr := rows.Close()
	switch {
	case errors.Is(err, io.EOF):
		return 0, false, errors.New("no row")
	case err != nil:
		return 0, false, err
	case closeErr != nil:
		return 0, false, closeErr
	}
	switch v := dest[0].(type) {
	case nil:
		return 0, false, nil
	case int64:
		return v, true, nil
	case []byte:
		n, err := strconv.ParseInt(string(v), 10, 64)
		return n, err == nil, err
	default:
		return 0, false, fmt.Errorf("unexpected %T", v)
	}
}

// prepare prepares query on the connection, keeps it and runs it.
func (s *driverSession) prepare(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	p, ok := s.conn.(driver.ConnPrepareContext)
	if !ok {
		return nil, errors.New("the driver connection cannot prepare")
	}
	st, err := p.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	sq, ok := st.(driver.StmtQueryContext)
	if !ok {
		_ = st.Close()
		return nil, errors.New("the driver statement cannot query")
	}
	if s.prepared == nil {
		s.prepared = map[string]driver.Stmt{}
	}
	s.prepared[query] = st
	return sq.QueryContext(ctx, args)
}

func (s *driverSession) TryLock(ctx context.Context, name string) (bool, error) {
	mapped := s.ops.serverName(name)
	got, valid, err := s.int(ctx, tryLockSQL, mapped, mapped)
	if err != nil {
		return false, fmt.Errorf("GET_LOCK: %w", err)
	}
	if !valid {
		return false, fmt.Errorf("GET_LOCK returned NULL (error in the server, e.g. the statement was killed)")
	}
	return got == 1, nil
}

func (s *driverSession) Unlock(ctx context.Context, name string) (bool, error) {
	released, valid, err := s.int(ctx, unlockSQL, s.ops.serverName(name))
	if err != nil {
		return false, fmt.Errorf("RELEASE_LOCK: %w", err)
	}
	return valid && released == 1, nil
}

func (s *driverSession) Holds(ctx context.Context, name string) (bool, error) {
	mine, valid, err := s.int(ctx, holdsSQL, s.ops.serverName(name))
	if err != nil {
		return false, fmt.Errorf("IS_USED_LOCK: %w", err)
	}
	return valid && mine == 1, nil
}

// Lock implements sqlkit.StatementWaiter: SessionOps.Lock on the driver
// connection.
func (s *driverSession) Lock(ctx context.Context, name string, wait time.Duration) (bool, error) {
	timeout := wait.Seconds()
	if s.ops.Info.Product != dialects.ProductMariaDB {
		timeout = math.Ceil(timeout)
	}
	got, valid, err := s.int(ctx, lockSQL, s.ops.serverName(name), timeout)
	if err != nil {
		return false, fmt.Errorf("GET_LOCK: %w", err)
	}
	if !valid {
		return false, fmt.Errorf("GET_LOCK returned NULL (error in the server, e.g. the statement was killed)")
	}
	return got == 1, nil
}

// Close frees the statements it prepared.
func (s *driverSession) Close() error {
	for _, st := range s.prepared {
		_ = st.Close()
	}
	return nil
}
