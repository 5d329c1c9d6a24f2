package mysql

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// NewSessionLocker returns the GET_LOCK locker running ops on db. It
// refuses, with an error matching dialects.ErrUnsupported, TiDB (GET_LOCK
// with timeout 0 still waits a second, and IS_USED_LOCK cannot name the
// holder), MySQL before 5.7.5 and MariaDB before 10.0.2 (a second GET_LOCK
// in a session silently released the first), as ops.Info names them.
func NewSessionLocker(db *sql.DB, ops *SessionOps) (dialects.Locker, error) {
	if err := sessionSupport(ops.Info); err != nil {
		return nil, err
	}
	return &sqlkit.SessionLocker{Dialect: Name, DB: db, Ops: ops}, nil
}

// sessionSupport returns nil when info's server has usable GET_LOCK
// session locks, else an error matching dialects.ErrUnsupported.
func sessionSupport(info dialects.Info) error {
	switch {
	case info.Product == dialects.ProductTiDB,
		info.Product == dialects.ProductMariaDB && !versionAtLeast(info.Version, 10, 0, 2),
		info.Product != dialects.ProductMariaDB && !versionAtLeast(info.Version, 5, 7, 5):
		return dialects.WithRemedy(fmt.Errorf("%w: %s", dialects.ErrUnsupported, sessionRefusal(info)), dialects.UseTableStrategy)
	}
	return nil
}

// sessionRefusal says why info's server gets no session locks; the
// remedy (dialects.UseTableStrategy) is not part of it.
func sessionRefusal(info dialects.Info) string {
	version := info.Version
	if version == "" {
		version = "(unknown version)"
	}
	switch info.Product {
	case dialects.ProductTiDB:
		return "TiDB's GET_LOCK waits at least 1 s even with timeout 0 and IS_USED_LOCK cannot name the holder"
	case dialects.ProductMariaDB:
		return fmt.Sprintf("MariaDB %s: before 10.0.2 a second GET_LOCK silently releases the first", version)
	default:
		return fmt.Sprintf("MySQL %s: before 5.7.5 a second GET_LOCK silently releases the first", version)
	}
}

// SessionOps runs GET_LOCK and its companions on one connection. It
// implements sqlkit.SessionOps. Names pass through LockName in Database, or are
// taken as they are with raw session names (Names). The zero value names
// locks by LockName with no database.
type SessionOps struct {
	// Info is the server: it selects the privilege named when KILL is
	// refused and how GET_LOCK's timeout is given.
	Info dialects.Info
	// Database is the scope of LockName (Backend.Database).
	Database string
	// Names is how locks are named (the DSN's x-session-names, checked
	// by CheckSessionNames); the zero value is LockName's scoped names.
	Names dialects.SessionNames
}

// serverName is the GET_LOCK name of the lock called name.
func (o *SessionOps) serverName(name string) string { return serverName(o.Database, o.Names, name) }

var (
	_ sqlkit.SessionOps = (*SessionOps)(nil)
)

// tryLockSQL tries once without waiting, refusing a lock this session
// already holds: GET_LOCK is re-entrant within a session (and may fold
// names that differ in letter case), so without the IS_USED_LOCK guard a second
// lease of one process sharing the connection would get the lock too. It
// answers 1 got it, 0 taken by another session, 2 taken by this one, NULL
// an error (for example the statement was killed).
const tryLockSQL = "SELECT IF(IS_USED_LOCK(?) = CONNECTION_ID(), 2, GET_LOCK(?, 0))"

// TryLock runs tryLockSQL: true only when the lock was free.
func (o *SessionOps) TryLock(ctx context.Context, conn *sql.Conn, name string) (bool, error) {
	mapped := o.serverName(name)
	return scanTryLock(conn.QueryRowContext(ctx, tryLockSQL, mapped, mapped))
}

// scanTryLock maps the answer of tryLockSQL.
func scanTryLock(row *sql.Row) (bool, error) {
	var got sql.NullInt64
	if err := row.Scan(&got); err != nil {
		return false, fmt.Errorf("GET_LOCK: %w", err)
	}
	if !got.Valid {
		return false, fmt.Errorf("GET_LOCK returned NULL (error in the server, e.g. the statement was killed)")
	}
	return got.Int64 == 1, nil
}

// The other session-lock statements, one bind parameter each.
const (
	unlockSQL = "SELECT RELEASE_LOCK(?)"
	holdsSQL  = "SELECT IS_USED_LOCK(?) = CONNECTION_ID()"
	lockSQL   = "SELECT GET_LOCK(?, ?)"
	guardSQL  = "SET SESSION wait_timeout = "
)

// Unlock runs SELECT RELEASE_LOCK(name): true when this session held the
// lock and freed it; false when another session holds it (0), which is
// left untouched, or nobody does (NULL).
func (o *SessionOps) Unlock(ctx context.Context, conn *sql.Conn, name string) (bool, error) {
	var released sql.NullInt64
	if err := conn.QueryRowContext(ctx, unlockSQL, o.serverName(name)).Scan(&released); err != nil {
		return false, fmt.Errorf("RELEASE_LOCK: %w", err)
	}
	return released.Valid && released.Int64 == 1, nil
}

// Holds reports whether conn's session holds name:
// SELECT IS_USED_LOCK(name) = CONNECTION_ID(), NULL (free) meaning false.
func (o *SessionOps) Holds(ctx context.Context, conn *sql.Conn, name string) (bool, error) {
	var mine sql.NullBool
	if err := conn.QueryRowContext(ctx, holdsSQL, o.serverName(name)).Scan(&mine); err != nil {
		return false, fmt.Errorf("IS_USED_LOCK: %w", err)
	}
	return mine.Valid && mine.Bool, nil
}
