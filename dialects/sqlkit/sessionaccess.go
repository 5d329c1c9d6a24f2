package sqlkit

import (
	"database/sql"

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

var _ SQLSessionLocker = (*SessionLocker)(nil)

// SessionPool implements SQLSessionLocker.
func (l *SessionLocker) SessionPool() (*sql.DB, SessionOps) { return l.DB, l.Ops }
