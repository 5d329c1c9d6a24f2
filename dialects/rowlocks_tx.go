package dialects

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ProbeRowLocksTx is ProbeRowLocks for drivers whose autocommit is a
// connection attribute that no SQL statement turns off (Dameng's driver
// commits every statement run outside a database/sql transaction, and a
// committed SELECT … FOR UPDATE holds nothing): the holder's transaction is
// started with (*sql.Conn).BeginTx, so p.Begin is not used. Every other
// statement and every answer are ProbeRowLocks': p.SkipLocked and p.NoWait
// run on a second connection outside a transaction.
//
// When the probe ends the holder's transaction is rolled back and its
// connection discarded, so its session ends with whatever it held even
// where the rollback did not reach the server; the table is dropped after
// that, with a fresh context when ctx has ended. The error is for a probe
// that could not run, as with ProbeRowLocks.
func ProbeRowLocksTx(ctx context.Context, db *sql.DB, p RowLockProbe) (skipLocked, noWait Capability, err error) {
	wait := p.Wait
	if wait <= 0 {
		wait = DefaultRowProbeWait
	}
	if n := db.Stats().MaxOpenConnections; n == 1 {
		return Capability{}, Capability{}, errors.New("the connection pool allows one connection and the probe needs two")
	}
	if _, err := db.ExecContext(ctx, p.Create); err != nil {
		return Capability{}, Capability{}, fmt.Errorf("create the probe table: %w", err)
	}
	cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	defer func() {
		if _, dropErr := db.ExecContext(cleanup, p.Drop); dropErr != nil && err == nil {
			err = fmt.Errorf("drop the probe table: %w", dropErr)
		}
	}()
	if _, err := db.ExecContext(ctx, p.Insert); err != nil {
		return Capability{}, Capability{}, fmt.Errorf("fill the probe table: %w", err)
	}

	a, err := probeConn(ctx, db)
	if err != nil {
		return Capability{}, Capability{}, fmt.Errorf("open the holder's connection: %w", err)
	}
	// Deferred after the DROP, so it runs before it: the holder's session
	// must be gone before DROP TABLE, which would otherwise wait for its
	// row lock.
	defer discard(a)
	tx, err := a.BeginTx(ctx, nil)
	if err != nil {
		return Capability{}, Capability{}, fmt.Errorf("begin the holder's transaction: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := lockProbeRow(ctx, tx, p.Lock); err != nil {
		return Capability{}, Capability{}, fmt.Errorf("lock the probe row: %w", err)
	}

	b, err := probeConn(ctx, db)
	if err != nil {
		return Capability{}, Capability{}, fmt.Errorf("open the second connection: %w", err)
	}
	bClean := true
	defer func() {
		if bClean {
			_ = b.Close()
		} else {
			discard(b)
		}
	}()
	skipLocked, bClean = probeSkipLocked(ctx, b, p, wait)
	if bClean {
		noWait, bClean = probeNoWait(ctx, b, p, wait)
	} else {
		noWait = CapUnknown("not probed: the second connection was dropped after the SKIP LOCKED probe", "")
	}
	if ctx.Err() != nil {
		return Capability{}, Capability{}, ctx.Err()
	}
	return skipLocked, noWait, nil
}

// lockProbeRow runs the holder's SELECT … FOR UPDATE in tx and reads its
// rows.
func lockProbeRow(ctx context.Context, tx *sql.Tx, query string) error {
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return rows.Close()
}
