// Package fakesql is a database/sql driver for tests of dialects that have
// no server here (Oracle, SQL Server, Dameng, Kingbase). A test supplies a
// Handler — usually a small simulator of the server's lock functions that
// answers with the server's real return codes, error numbers and row
// shapes — and gets a *sql.DB whose every statement goes through it, with
// one Session per physical connection, so session-scoped behaviour (locks
// freed at disconnect, the pool trap) can be simulated.
package fakesql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
)

// Session is one simulated server session (physical connection).
type Session struct {
	// ID is unique per Open, starting at 1.
	ID int64
	// Values is free for the Handler to keep per-session state in; only
	// the session's own statements may touch it.
	Values map[string]any

	killed atomic.Bool
}

// Response is what a statement returns: Rows for a query, or
// RowsAffected/LastInsertID for an exec.
type Response struct {
	Columns      []string
	Rows         [][]any
	RowsAffected int64
	LastInsertID int64
}

// Handler answers statements. Exec and query both arrive here; args are
// the bound values in order (named values keep their order). Close is
// called when a session's connection is closed (server-side cleanup).
type Handler interface {
	Handle(s *Session, query string, args []driver.NamedValue) (Response, error)
	Close(s *Session)
}

// ContextHandler is implemented by Handlers whose statements can block
// (a simulated server-side lock wait). When a Handler implements it,
// HandleContext answers every statement instead of Handle, with the
// context the caller gave database/sql: a statement that blocks should
// end with ctx.Err() when ctx ends, as a driver that cancels the
// statement on the server does.
type ContextHandler interface {
	HandleContext(ctx context.Context, s *Session, query string, args []driver.NamedValue) (Response, error)
}

// Log records every statement sent, in order, for assertions on SQL text
// and round trips, and every statement prepared.
type Log struct {
	mu       sync.Mutex
	stmts    []string
	calls    []Call
	prepared []Prepared
}

// Call is one statement sent: the session that ran it, its text, and
// whether it ran as a prepared statement (through a driver.Stmt) or was
// sent on the connection directly.
type Call struct {
	Session  int64
	Query    string
	Prepared bool
}

// Calls returns a copy of the statements sent so far, in order, with
// their sessions.
func (l *Log) Calls() []Call {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Call(nil), l.calls...)
}

// Prepared is one statement prepared on a session's connection. Preparing
// sends nothing to the Handler: it is not a round trip of this driver.
type Prepared struct {
	Session int64 // Session.ID
	Query   string
}

// Prepares returns a copy of the statements prepared so far, in order.
func (l *Log) Prepares() []Prepared {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Prepared(nil), l.prepared...)
}

func (l *Log) addPrepare(p Prepared) {
	l.mu.Lock()
	l.prepared = append(l.prepared, p)
	l.mu.Unlock()
}

// Statements returns a copy of the statements recorded so far.
func (l *Log) Statements() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.stmts...)
}

func (l *Log) add(c Call) {
	l.mu.Lock()
	l.stmts = append(l.stmts, c.Query)
	l.calls = append(l.calls, c)
	l.mu.Unlock()
}

// Open returns a *sql.DB whose connections are sessions of h, and the log
// of statements it receives.
func Open(h Handler) (*sql.DB, *Log) {
	c := &connector{h: h, log: &Log{}}
	return sql.OpenDB(c), c.log
}

type connector struct {
	h    Handler
	log  *Log
	next atomic.Int64
}

func (c *connector) Connect(context.Context) (driver.Conn, error) {
	return &conn{c: c, s: &Session{ID: c.next.Add(1), Values: map[string]any{}}}, nil
}

func (c *connector) Driver() driver.Driver { return fakeDriver{} }

type fakeDriver struct{}

func (fakeDriver) Open(string) (driver.Conn, error) {
	return nil, errors.New("fakesql: use fakesql.Open")
}

type conn struct {
	c      *connector
	s      *Session
	mu     sync.Mutex
	closed bool
}

// ErrClosed is returned for statements on a closed (killed) session.
var ErrClosed = driver.ErrBadConn

func (c *conn) run(ctx context.Context, query string, args []driver.NamedValue, prepared bool) (Response, error) {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return Response{}, ErrClosed
	}
	c.c.log.add(Call{Session: c.s.ID, Query: query, Prepared: prepared})
	if ch, ok := c.c.h.(ContextHandler); ok {
		return ch.HandleContext(ctx, c.s, query, args)
	}
	return c.c.h.Handle(c.s, query, args)
}

// Kill marks the session closed as if the server had terminated it; later
// statements on it fail with driver.ErrBadConn. Handlers call it from a
// simulated KILL (and free the session's locks themselves). Safe to call
// from another session's statement.
func Kill(s *Session) { s.killed.Store(true) }

func (c *conn) Prepare(query string) (driver.Stmt, error) {
	c.c.log.addPrepare(Prepared{Session: c.s.ID, Query: query})
	return &stmt{c: c, query: query}, nil
}

func (c *conn) Close() error {
	c.mu.Lock()
	already := c.closed
	c.closed = true
	c.mu.Unlock()
	if !already {
		c.c.h.Close(c.s)
	}
	return nil
}

func (c *conn) Begin() (driver.Tx, error) { return tx{}, nil }

// BeginTx starts a transaction (commit and rollback are no-ops). A
// non-default isolation level reaches the Handler, and the log, as the
// statement "SET TRANSACTION ISOLATION LEVEL <level>", so a test sees
// which level a transaction asked for; the default level sends nothing.
func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if opts.Isolation != driver.IsolationLevel(sql.LevelDefault) {
		level := strings.ToUpper(sql.IsolationLevel(opts.Isolation).String())
		if _, err := c.run(ctx, "SET TRANSACTION ISOLATION LEVEL "+level, nil, false); err != nil {
			return nil, err
		}
	}
	return tx{}, nil
}

// IsValid lets database/sql drop killed sessions from the pool.
func (c *conn) IsValid() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.closed && !c.s.killed.Load()
}

func (c *conn) ResetSession(context.Context) error {
	if !c.IsValid() {
		return driver.ErrBadConn
	}
	return nil
}

// Ping answers like a server: driver.ErrBadConn once the session was
// killed or closed.
func (c *conn) Ping(context.Context) error {
	if !c.IsValid() {
		return driver.ErrBadConn
	}
	return nil
}

func (c *conn) checkKilled() error {
	if c.s.killed.Load() {
		_ = c.Close()
		return driver.ErrBadConn
	}
	return nil
}

func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return c.exec(ctx, query, args, false)
}

func (c *conn) exec(ctx context.Context, query string, args []driver.NamedValue, prepared bool) (driver.Result, error) {
	if err := c.checkKilled(); err != nil {
		return nil, err
	}
	r, err := c.run(ctx, query, args, prepared)
	if err != nil {
		return nil, err
	}
	return result{r}, nil
}

func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return c.query(ctx, query, args, false)
}

func (c *conn) query(ctx context.Context, query string, args []driver.NamedValue, prepared bool) (driver.Rows, error) {
	if err := c.checkKilled(); err != nil {
		return nil, err
	}
	r, err := c.run(ctx, query, args, prepared)
	if err != nil {
		return nil, err
	}
	return &rows{r: r}, nil
}

// CheckNamedValue accepts every value as it is (sql.Out included), so
// handlers see what the dialect bound.
func (c *conn) CheckNamedValue(*driver.NamedValue) error { return nil }

type tx struct{}

func (tx) Commit() error   { return nil }
func (tx) Rollback() error { return nil }

type stmt struct {
	c     *conn
	query string
}

func (s *stmt) Close() error  { return nil }
func (s *stmt) NumInput() int { return -1 }
func (s *stmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.c.exec(context.Background(), s.query, named(args), true)
}
func (s *stmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.c.query(context.Background(), s.query, named(args), true)
}
func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.c.exec(ctx, s.query, args, true)
}
func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.c.query(ctx, s.query, args, true)
}

func named(args []driver.Value) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, a := range args {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return out
}

type result struct{ r Response }

func (r result) LastInsertId() (int64, error) { return r.r.LastInsertID, nil }
func (r result) RowsAffected() (int64, error) { return r.r.RowsAffected, nil }

type rows struct {
	r Response
	i int
}

func (r *rows) Columns() []string { return r.r.Columns }
func (r *rows) Close() error      { return nil }
func (r *rows) Next(dest []driver.Value) error {
	if r.i >= len(r.r.Rows) {
		return io.EOF
	}
	row := r.r.Rows[r.i]
	r.i++
	if len(row) != len(dest) {
		return fmt.Errorf("fakesql: row has %d values, query has %d columns", len(row), len(dest))
	}
	for i, v := range row {
		dest[i] = v
	}
	return nil
}
