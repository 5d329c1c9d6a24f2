package dbmslock

import (
	"context"
	"database/sql"
	"time"

	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// Blocks are one dialect's PL/SQL blocks for a DBMS_LOCK session lock.
// Each block binds, in order, the DBMS_LOCK name, an OUT return code and
// (Lock only) the timeout in seconds, and turns the name into a handle with
// ALLOCATE_UNIQUE before its call.
type Blocks struct {
	// TryLock: REQUEST in exclusive mode without waiting, the lock kept
	// across COMMIT and ROLLBACK until RELEASE or the end of the session.
	TryLock string
	// Unlock: RELEASE (4 when this session does not own the lock, which it
	// leaves alone).
	Unlock string
	// Holds: REQUEST without waiting, giving back at once a lock it has
	// just taken (0), so that 4 means this session holds it.
	Holds string
	// Lock: REQUEST in exclusive mode waiting up to the third bind's
	// seconds.
	Lock string
}

// Session runs one dialect's DBMS_LOCK blocks on a lock connection: it
// implements sqlkit.SessionOps, SessionPreparer, SessionWaiter and
// SessionKeyer for the sqlkit.SessionLocker. The dialect's SessionOps
// (usable as a zero value) call its package's Session and add what
// differs (holder lookup, killing a session).
type Session struct {
	// Blocks are the dialect's statements.
	Blocks Blocks
	// LockName maps a lock name to its DBMS_LOCK name; names with one
	// DBMS_LOCK name are one lock.
	LockName func(name string) string
	// Failed turns the error of a block that failed (call is "REQUEST" or
	// "RELEASE") into the dialect's error, for example a missing EXECUTE
	// grant into a *dialects.PrivilegeError. It must wrap err.
	Failed func(ctx context.Context, conn *sql.Conn, call string, err error) error
}

var (
	_ sqlkit.SessionOps      = (*Session)(nil)
	_ sqlkit.SessionPreparer = (*Session)(nil)
	_ sqlkit.SessionWaiter   = (*Session)(nil)
	_ sqlkit.SessionKeyer    = (*Session)(nil)
)

// LockKey is the DBMS_LOCK name: REQUEST of a lock the session already
// owns answers 4, which must never give a second lease of the process the
// same lock.
func (s *Session) LockKey(name string) string { return s.LockName(name) }

// TryLock runs Blocks.TryLock and maps its answer with RequestResult.
func (s *Session) TryLock(ctx context.Context, conn *sql.Conn, name string) (bool, error) {
	return s.call(ctx, conn, conn.ExecContext, "REQUEST", s.Blocks.TryLock, name, RequestResult)
}

// Unlock runs Blocks.Unlock and maps its answer with ReleaseResult:
// another session's lock is never freed.
func (s *Session) Unlock(ctx context.Context, conn *sql.Conn, name string) (bool, error) {
	return s.call(ctx, conn, conn.ExecContext, "RELEASE", s.Blocks.Unlock, name, ReleaseResult)
}

// Holds runs Blocks.Holds and maps its answer with HoldsResult.
func (s *Session) Holds(ctx context.Context, conn *sql.Conn, name string) (bool, error) {
	return s.call(ctx, conn, conn.ExecContext, "REQUEST", s.Blocks.Holds, name, HoldsResult)
}

// Lock waits on the server for up to wait: Blocks.Lock with a timeout of
// TimeoutSeconds(wait), so the wait is rounded up to whole seconds. The
// answer is mapped by WaitResult. The SessionLocker runs it on a lock
// connection holding no other lock and no transaction (so the commit of
// ALLOCATE_UNIQUE is harmless), and closes that connection when ctx ends
// during the wait, so a grant racing with the cancel is freed with it.
func (s *Session) Lock(ctx context.Context, conn *sql.Conn, name string, wait time.Duration) (bool, error) {
	return s.call(ctx, conn, conn.ExecContext, "REQUEST", s.Blocks.Lock, name, WaitResult, TimeoutSeconds(wait))
}

// Prepare prepares the four blocks on conn, so that every operation is
// one execution of a block parsed once per lock connection (one round
// trip, where an unprepared block may cost a cursor close too).
func (s *Session) Prepare(ctx context.Context, conn *sql.Conn) (sqlkit.SessionStatements, error) {
	p := &prepared{s: s, conn: conn}
	for _, b := range []struct {
		stmt **sql.Stmt
		sql  string
	}{{&p.try, s.Blocks.TryLock}, {&p.unlock, s.Blocks.Unlock}, {&p.holds, s.Blocks.Holds}, {&p.lock, s.Blocks.Lock}} {
		st, err := conn.PrepareContext(ctx, b.sql)
		if err != nil {
			_ = p.Close()
			return nil, err
		}
		*b.stmt = st
	}
	return p, nil
}

// execFunc runs a block's SQL with its binds: conn.ExecContext, or a
// prepared statement's ExecContext that ignores the SQL.
type execFunc func(ctx context.Context, query string, args ...any) (sql.Result, error)

// Code runs block on conn with the DBMS_LOCK name of name, an OUT return
// code and extra as binds, and returns the return code unmapped (for
// callers that read it otherwise, such as a test from another session).
func (s *Session) Code(ctx context.Context, conn *sql.Conn, call, block, name string, extra ...any) (int64, error) {
	return s.code(ctx, conn, conn.ExecContext, call, block, name, extra...)
}

func (s *Session) code(ctx context.Context, conn *sql.Conn, exec execFunc, call, block, name string, extra ...any) (int64, error) {
	var rc int64
	args := append([]any{s.LockName(name), sql.Out{Dest: &rc}}, extra...)
	if _, err := exec(ctx, block, args...); err != nil {
		return 0, s.Failed(ctx, conn, call, err)
	}
	return rc, nil
}

// call runs block through exec (see Code) and maps the return code with
// result.
func (s *Session) call(ctx context.Context, conn *sql.Conn, exec execFunc, call, block, name string, result func(int64) (bool, error), extra ...any) (bool, error) {
	rc, err := s.code(ctx, conn, exec, call, block, name, extra...)
	if err != nil {
		return false, err
	}
	return result(rc)
}

// prepared is a Session's blocks prepared on one lock connection. It
// implements sqlkit.SessionStatements and sqlkit.StatementWaiter.
type prepared struct {
	s                        *Session
	conn                     *sql.Conn
	try, unlock, holds, lock *sql.Stmt
}

var _ sqlkit.StatementWaiter = (*prepared)(nil)

// on runs st, ignoring the SQL text execFunc is given.
func on(st *sql.Stmt) execFunc {
	return func(ctx context.Context, _ string, args ...any) (sql.Result, error) {
		return st.ExecContext(ctx, args...)
	}
}

func (p *prepared) TryLock(ctx context.Context, name string) (bool, error) {
	return p.s.call(ctx, p.conn, on(p.try), "REQUEST", "", name, RequestResult)
}

func (p *prepared) Unlock(ctx context.Context, name string) (bool, error) {
	return p.s.call(ctx, p.conn, on(p.unlock), "RELEASE", "", name, ReleaseResult)
}

func (p *prepared) Holds(ctx context.Context, name string) (bool, error) {
	return p.s.call(ctx, p.conn, on(p.holds), "REQUEST", "", name, HoldsResult)
}

// Lock is Session.Lock on the prepared block.
func (p *prepared) Lock(ctx context.Context, name string, wait time.Duration) (bool, error) {
	return p.s.call(ctx, p.conn, on(p.lock), "REQUEST", "", name, WaitResult, TimeoutSeconds(wait))
}

// Close frees the statements.
func (p *prepared) Close() error {
	for _, st := range []*sql.Stmt{p.try, p.unlock, p.holds, p.lock} {
		if st != nil {
			_ = st.Close()
		}
	}
	return nil
}
