package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/benchops"
)

var (
	_ benchops.HoldingCounter  = (*Backend)(nil)
	_ benchops.SessionBaseline = (*Backend)(nil)
)

// The Backend gives `schedlock bench` its raw baselines as methods, which
// the harness finds on the opened backend (the contract of package
// dialects/benchops): the raw advisory-lock statements the session locker
// competes with, on a pgx connection of their own, a count of the backends
// holding a set of advisory locks from pg_locks, and the claim a
// developer writes by hand (claimbench.go).

// RawSession implements benchops.SessionBaseline: one pgx connection of
// its own (a *pgx.Conn, not database/sql), opened with the configuration
// of the backend's pool, running the advisory-lock statements a developer
// writes by hand: pg_try_advisory_lock($1) and pg_advisory_unlock($1) on
// the key of each (scoped) name, pg_advisory_lock($1) under a
// lock_timeout for a wait, and SELECT 1, each with pgx's default query
// mode (prepared once and cached). The catalog is the one detection
// found (sys_ names on KingbaseES).
func (b *Backend) RawSession(ctx context.Context) (benchops.SessionOps, error) {
	cfg, err := b.pgxConfig(ctx)
	if err != nil {
		return benchops.SessionOps{}, err
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return benchops.SessionOps{}, dialects.Wrap(Name, "raw session", err)
	}
	c := b.catalog()
	try, unlock := "SELECT "+c.TryLock+"($1)", "SELECT "+c.Unlock+"($1)"
	lock := "SELECT " + strings.Replace(c.TryLock, "try_", "", 1) + "($1)"
	one := func(ctx context.Context, sql string, key int64) (bool, error) {
		var ok bool
		err := conn.QueryRow(ctx, sql, key).Scan(&ok)
		return ok, err
	}
	return benchops.SessionOps{
		RoundTrip: func(ctx context.Context) error {
			var n int
			return conn.QueryRow(ctx, "SELECT 1").Scan(&n)
		},
		TryLock: func(ctx context.Context, name string) (bool, error) { return one(ctx, try, Key(name)) },
		Unlock:  func(ctx context.Context, name string) (bool, error) { return one(ctx, unlock, Key(name)) },
		Lock: func(ctx context.Context, name string, wait time.Duration) (bool, error) {
			// The session's lock_timeout bounds the wait; it was set
			// for the connection's life, once (rawLockTimeout).
			if err := rawLockTimeout(ctx, conn, wait); err != nil {
				return false, err
			}
			_, err := conn.Exec(ctx, lock, Key(name))
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == codeLockNotAvailable {
				return false, nil
			}
			return err == nil, err
		},
		Close: func() error { return conn.Close(context.Background()) },
	}, nil
}

// rawLockTimeout sets lock_timeout to wait on conn when it is not set to
// it already: a raw waiting loop sets it once and then only waits.
func rawLockTimeout(ctx context.Context, conn *pgx.Conn, wait time.Duration) error {
	ms := strconv.FormatInt(max(wait.Milliseconds(), 1), 10) + "ms"
	if conn.PgConn().CustomData()["lock_timeout"] == ms {
		return nil
	}
	if _, err := conn.Exec(ctx, "SELECT set_config('lock_timeout', $1, false)", ms); err != nil {
		return err
	}
	conn.PgConn().CustomData()["lock_timeout"] = ms
	return nil
}

// pgxConfig is the pgx configuration of the backend's pool: read from a
// pooled connection, so that it holds whatever the pool was opened with.
func (b *Backend) pgxConfig(ctx context.Context) (*pgx.ConnConfig, error) {
	conn, err := b.SQL.Conn(ctx)
	if err != nil {
		return nil, dialects.Wrap(Name, "raw session", err)
	}
	defer conn.Close()
	var cfg *pgx.ConnConfig
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("%w: the pool's driver is %T, not pgx", dialects.ErrUnsupported, dc)
		}
		cfg = c.Conn().Config()
		return nil
	})
	if err != nil {
		return nil, dialects.Wrap(Name, "raw session", err)
	}
	cfg.Tracer = nil
	return cfg, nil
}

// CountHoldingSessions counts the distinct backend pids holding a granted
// advisory lock on Key(name) of any of names in the current database, in
// the catalog detection found, on conn (a connection taken before the
// locks, so the count works when they use up the connection limit).
func (b *Backend) CountHoldingSessions(ctx context.Context, conn *sql.Conn, names []string) (int, error) {
	c := b.catalog()
	classids := make([]int64, len(names))
	objids := make([]int64, len(names))
	for i, n := range names {
		hi, lo := KeyParts(Key(n))
		classids[i], objids[i] = int64(hi), int64(lo)
	}
	var count int
	err := conn.QueryRowContext(ctx, c.holdingSessionsSQL(), classids, objids).Scan(&count)
	if err != nil {
		return 0, dialects.Wrap(Name, "count lock holders", fmt.Errorf("read %s: %w", c.Locks, err))
	}
	return count, nil
}

// holdingSessionsSQL counts the backends holding any of the bigint keys
// given as two arrays of their halves (see holdsSQL for the key layout).
func (c Catalog) holdingSessionsSQL() string {
	return "SELECT count(DISTINCT l.pid) FROM " + c.Locks + " l\n" +
		"JOIN unnest($1::bigint[], $2::bigint[]) AS k(classid, objid) ON l.classid::bigint = k.classid AND l.objid::bigint = k.objid\n" +
		"WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted\n" +
		"AND l.database = (SELECT oid FROM " + c.Database + " WHERE datname = current_database())"
}
