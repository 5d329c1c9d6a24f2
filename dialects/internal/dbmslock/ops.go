package dbmslock

import (
	"context"
	"database/sql"
	"time"

	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// Dialect names one dialect's Session as a type, so that Ops, which holds
// nothing, can reach it: Session returns the dialect's *Session (usually a
// package variable). It is implemented by an empty struct of the dialect.
type Dialect interface {
	Session() *Session
}

// Ops are the session-lock methods every DBMS_LOCK dialect shares, run by
// the Session of D. A dialect's SessionOps embeds Ops[D] and adds what
// differs (Holder, Kill); Ops being empty, that SessionOps stays usable as
// a zero value. It implements sqlkit.SessionOps, SessionPreparer,
// SessionWaiter and SessionKeyer.
type Ops[D Dialect] struct{}

var (
	_ sqlkit.SessionOps      = Ops[Dialect]{}
	_ sqlkit.SessionPreparer = Ops[Dialect]{}
	_ sqlkit.SessionWaiter   = Ops[Dialect]{}
	_ sqlkit.SessionKeyer    = Ops[Dialect]{}
)

func (Ops[D]) session() *Session {
	var d D
	return d.Session()
}

// TryLock runs DBMS_LOCK.REQUEST without waiting: 0 (granted) and 4
// (already owned by this session) are true, 1 (another session holds it)
// false, 2, 3 and 5 a *Error (RequestResult).
func (o Ops[D]) TryLock(ctx context.Context, conn *sql.Conn, name string) (bool, error) {
	return o.session().TryLock(ctx, conn, name)
}

// Unlock runs DBMS_LOCK.RELEASE: 0 released (true); 4 this session did
// not own it (false: another session's lock is never freed).
func (o Ops[D]) Unlock(ctx context.Context, conn *sql.Conn, name string) (bool, error) {
	return o.session().Unlock(ctx, conn, name)
}

// Holds asks DBMS_LOCK.REQUEST whether conn's session already owns name
// (Blocks.Holds).
func (o Ops[D]) Holds(ctx context.Context, conn *sql.Conn, name string) (bool, error) {
	return o.session().Holds(ctx, conn, name)
}

// Lock waits on the server for up to wait, rounded up to whole seconds
// (Session.Lock).
func (o Ops[D]) Lock(ctx context.Context, conn *sql.Conn, name string, wait time.Duration) (bool, error) {
	return o.session().Lock(ctx, conn, name, wait)
}

// LockKey is the DBMS_LOCK name (Session.LockName): names with one
// DBMS_LOCK name are one lock.
func (o Ops[D]) LockKey(name string) string { return o.session().LockKey(name) }

// Prepare prepares the four blocks on conn, so that every operation is
// one round trip.
func (o Ops[D]) Prepare(ctx context.Context, conn *sql.Conn) (sqlkit.SessionStatements, error) {
	return o.session().Prepare(ctx, conn)
}
