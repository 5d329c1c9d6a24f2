package sqlkit

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/schedlock/schedlock/dialects"
)

// SQLSessionLocker is implemented by session lockers over a database/sql
// pool (*SessionLocker). The conformance checks that drive a database's
// SessionOps on connections of their own (the pooled-connection trap) use
// it; a backend that is not database/sql does not implement it.
type SQLSessionLocker interface {
	dialects.Locker
	// SessionPool returns the pool the locker takes its connections from
	// and the statements it runs on them.
	SessionPool() (*sql.DB, SessionOps)
}

// SessionTerminator is implemented by session lockers that can find the
// session holding a lock and terminate it, which frees its locks. Either
// method fails with an error matching ErrUnsupported where the database
// has no way to do so.
type SessionTerminator interface {
	// HolderSession returns the id of the session holding name, or "" when
	// the lock is free.
	HolderSession(ctx context.Context, name string) (string, error)
	// KillSession terminates the session whose id HolderSession returned.
	KillSession(ctx context.Context, sessionID string) error
}

var (
	_ SQLSessionLocker  = (*SessionLocker)(nil)
	_ SessionTerminator = (*SessionLocker)(nil)
)

// SessionPool implements SQLSessionLocker.
func (l *SessionLocker) SessionPool() (*sql.DB, SessionOps) { return l.DB, l.Ops }

// HolderSession implements SessionTerminator with the SessionOps'
// HolderFinder.
func (l *SessionLocker) HolderSession(ctx context.Context, name string) (string, error) {
	finder, ok := l.Ops.(HolderFinder)
	if !ok {
		return "", fmt.Errorf("%w: %s session locks cannot name their holder", dialects.ErrUnsupported, l.Dialect)
	}
	return finder.Holder(ctx, l.DB, name)
}

// KillSession implements SessionTerminator with the SessionOps'
// SessionKiller.
func (l *SessionLocker) KillSession(ctx context.Context, sessionID string) error {
	killer, ok := l.Ops.(SessionKiller)
	if !ok {
		return fmt.Errorf("%w: %s session locks have no way to terminate the holder", dialects.ErrUnsupported, l.Dialect)
	}
	return killer.Kill(ctx, l.DB, sessionID)
}
