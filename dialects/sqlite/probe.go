package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// claimRemedy is how rows are claimed on a database without row locks.
const claimRemedy = "claim rows optimistically (UPDATE … WHERE version = ?) inside BEGIN IMMEDIATE"

// Probe finds out what the SQLite database of db can do. SQLite has no session
// locks, row locks or server sessions, so those capabilities are "no"
// with the reason; it reads PRAGMA read_uncommitted for the isolation
// level, PRAGMA query_only, and strftime('%Y-%m-%d %H:%M:%f','now') for the
// clock (the host's own clock, so the skew is only the query's latency).
// Unless opts.ReadOnly, it proves the file is writable by creating and
// dropping a probe table.
func Probe(ctx context.Context, db *sql.DB, opts dialects.ProbeOptions) (dialects.Capabilities, error) {
	caps := dialects.Capabilities{
		SkipLocked: dialects.CapNo("SQLite has no row locks: a writer locks the whole database", claimRemedy),
		NoWait:     dialects.CapNo("SQLite has no row locks; a busy database is waited for up to busy_timeout, then fails with SQLITE_BUSY", ""),
		LockListing: dialects.CapNo("SQLite has no session locks to list",
			"use the table strategy: locks ls lists the lease table"),
		KillSessions: dialects.CapNo("SQLite is embedded: there are no server sessions to terminate",
			"a table lock whose holder died frees itself when its lease ends, or with schedlock unlock"),
	}
	caps.Isolation = probeIsolation(ctx, db)
	p, err := writePrivilege(ctx, db, opts)
	if err != nil {
		return caps, err
	}
	if p != nil {
		caps.MissingPrivileges = append(caps.MissingPrivileges, *p)
	}
	caps.Clock = sqlkit.MeasureClock(ctx, db, ServerNow)
	return caps, ctx.Err()
}

// ServerNow reads SQLite's 'now' with milliseconds, in UTC.
func ServerNow(ctx context.Context, conn *sql.Conn) (time.Time, error) {
	var s string
	if err := conn.QueryRowContext(ctx, "SELECT strftime('%Y-%m-%d %H:%M:%f', 'now')").Scan(&s); err != nil {
		return time.Time{}, fmt.Errorf("strftime('now'): %w", err)
	}
	return sqlkit.ParseServerTime(s)
}

// probeIsolation reads PRAGMA read_uncommitted: SQLite transactions are
// serializable unless a shared-cache connection turned that on.
func probeIsolation(ctx context.Context, db *sql.DB) dialects.Capability {
	var readUncommitted int
	if err := db.QueryRowContext(ctx, "PRAGMA read_uncommitted").Scan(&readUncommitted); err != nil {
		return dialects.CapUnknown("PRAGMA read_uncommitted failed: "+err.Error(), "")
	}
	if readUncommitted != 0 {
		return dialects.CapYes("read uncommitted")
	}
	return dialects.CapYes("serializable")
}

// writePrivilege is the missing write access that keeps every lock from
// working (each acquire writes the lease table), or nil: PRAGMA query_only
// always, and unless opts.ReadOnly a probe table created and dropped. The
// error says the probe table could not be dropped, or the context ended.
func writePrivilege(ctx context.Context, db *sql.DB, opts dialects.ProbeOptions) (*dialects.MissingPrivilege, error) {
	const neededFor = "every lock: the lease table is written on each acquire, refresh and release"
	var queryOnly int
	if err := db.QueryRowContext(ctx, "PRAGMA query_only").Scan(&queryOnly); err == nil && queryOnly != 0 {
		return &dialects.MissingPrivilege{Privilege: "writes (PRAGMA query_only is on)", NeededFor: neededFor, Grant: "PRAGMA query_only = OFF"}, nil
	}
	if opts.ReadOnly {
		return nil, ctx.Err()
	}
	t := sqlkit.ProbeTableName()
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+t+" (id INTEGER PRIMARY KEY)"); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return &dialects.MissingPrivilege{Privilege: "write access to the database file (" + err.Error() + ")", NeededFor: neededFor}, nil
	}
	cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := db.ExecContext(cleanup, "DROP TABLE IF EXISTS "+t); err != nil {
		return nil, fmt.Errorf("drop the probe table %s: %w", t, err)
	}
	return nil, nil
}
