package benchkit

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// RoundTrip measures the physical limit: one trivial statement after the
// other on conn. statement is "" for DefaultRoundTripSQL; when it fails and
// the driver can ping, the ping is measured instead and named "ping".
func RoundTrip(ctx context.Context, conn *sql.Conn, statement string, b Budget) (string, Rate, error) {
	if statement == "" {
		statement = DefaultRoundTripSQL
	}
	one := func() error {
		var v any
		return conn.QueryRowContext(ctx, statement).Scan(&v)
	}
	if err := one(); err != nil {
		if ctx.Err() != nil {
			return statement, Rate{}, err
		}
		statement = "ping"
		one = func() error { return conn.PingContext(ctx) }
		if perr := one(); perr != nil {
			return statement, Rate{}, fmt.Errorf("round trip: %w", err)
		}
	}
	r, err := loop(b, one)
	if err != nil {
		err = fmt.Errorf("round trip (%s): %w", statement, err)
	}
	return statement, r, err
}

// rawSessionCycle is one raw cycle: TryLock then Unlock of name on the
// driver connection of ops, the raw statements a session locker competes
// with. A refused TryLock is an error: name must be free.
func rawSessionCycle(ctx context.Context, ops SessionOps, name string) func() error {
	return func() error {
		ok, err := ops.TryLock(ctx, name)
		if err != nil {
			return fmt.Errorf("raw try-lock: %w", err)
		}
		if !ok {
			return fmt.Errorf("raw try-lock of %q was refused: another session holds it", name)
		}
		// The unlock runs even when ctx has just ended, so that the
		// connection never keeps the lock.
		ok, err = ops.Unlock(context.WithoutCancel(ctx), name)
		if err != nil {
			return fmt.Errorf("raw unlock: %w", err)
		}
		if !ok {
			return fmt.Errorf("raw unlock of %q found it not held", name)
		}
		return nil
	}
}

// engineCycle is one engine cycle: Acquire then Release of name through
// locker. A refused Acquire is an error: name must be free.
func engineCycle(ctx context.Context, locker dialects.Locker, name string, opts dialects.Options) func() error {
	return func() error {
		lease, err := locker.Acquire(ctx, name, opts)
		if err != nil {
			return fmt.Errorf("acquire: %w", err)
		}
		if err := lease.Release(context.WithoutCancel(ctx)); err != nil {
			return fmt.Errorf("release: %w", err)
		}
		return nil
	}
}

// loop runs cycle until the budget is spent or cycle fails.
func loop(b Budget, cycle func() error) (Rate, error) {
	m := b.begin()
	for m.more() {
		if err := cycle(); err != nil {
			return newRate(m.done.Load(), time.Since(m.start)), err
		}
		m.add()
	}
	return newRate(m.done.Load(), time.Since(m.start)), nil
}

// pin takes one connection of db for a raw measurement.
func pin(ctx context.Context, db *sql.DB) (*sql.Conn, error) {
	c, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("get connection: %w", err)
	}
	return c, nil
}

// unpin gives conn back to the pool, or closes its physical connection
// when a measurement on it failed: a lock it might still hold goes with it.
func unpin(conn *sql.Conn, failed bool) {
	if failed {
		_ = conn.Raw(func(any) error { return errBadConn })
	}
	_ = conn.Close()
}

// isHeld reports whether err is a refusal because the lock is taken.
func isHeld(err error) bool { return errors.Is(err, dialects.ErrHeld) }

// errBadConn makes database/sql close a connection instead of pooling it.
var errBadConn = driver.ErrBadConn
