package sqlkit

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// Probe finds out what this database can do: the dialect's probe, the
// two-connection session-lock probe, and the recommendation that follows.
// The lock strategy is the dialect's Recommend, downgraded to the table
// strategy when session locks failed the probe; the claim strategy is the
// dialect's when it set one, else skip-locked where SKIP LOCKED works and
// optimistic elsewhere. It leaves nothing behind.
func (db *DB) Probe(ctx context.Context, opts dialects.ProbeOptions) (dialects.Capabilities, error) {
	var caps dialects.Capabilities
	pe, ok := db.engine.(ProbeEngine)
	if !ok {
		none := dialects.CapUnknown("the "+db.Dialect.Name+" dialect has no probe", "")
		caps = dialects.Capabilities{SkipLocked: none, NoWait: none, Isolation: none, LockListing: none, KillSessions: none}
	} else {
		var err error
		if caps, err = pe.ProbeDialect(ctx, opts); err != nil {
			return dialects.Capabilities{}, dialects.Wrap(db.Dialect.Name, "probe", err)
		}
	}
	if caps.SessionLocks.Status == "" {
		caps.SessionLocks = db.probeSessionLocker(ctx)
	}
	if err := ctx.Err(); err != nil {
		return dialects.Capabilities{}, dialects.Wrap(db.Dialect.Name, "probe", err)
	}
	if caps.MissingPrivileges == nil {
		caps.MissingPrivileges = []dialects.MissingPrivilege{}
	}
	caps.Recommended = db.recommend(caps)
	return caps, nil
}

// probeSessionLocker proves the session locker's SessionOps, or says why
// this database has none.
func (db *DB) probeSessionLocker(ctx context.Context) dialects.Capability {
	l, err := db.SessionLocker()
	if err != nil {
		if errors.Is(err, dialects.ErrUnsupported) {
			return dialects.CapNo(unsupportedReason(err), "").Fixed(dialects.UseTableStrategy, "")
		}
		return dialects.CapUnknown("no session locker: "+err.Error(), "")
	}
	sl, ok := l.(*SessionLocker)
	if !ok || sl.Ops == nil {
		return dialects.CapUnknown(fmt.Sprintf("the session locker (%T) exposes no SessionOps to probe", l), "")
	}
	return ProbeSessionOps(ctx, db.SQL, sl.Ops)
}

// recommend picks the lock and claim strategies from caps.
func (db *DB) recommend(caps dialects.Capabilities) dialects.Recommendation {
	r := caps.Recommended
	if r.LockStrategy == "" { // a probe with fresher facts than detection's may have set it
		r.LockStrategy, r.LockReason = db.Recommend()
	}
	if r.LockStrategy == dialects.StrategySession && caps.SessionLocks.Status != dialects.StatusYes {
		r.LockStrategy = dialects.StrategyTable
		r.LockReason = fmt.Sprintf("%s recommends session locks, but they failed the two-connection probe (%s: %s); the lease table is a real lock",
			db.Dialect.Name, caps.SessionLocks.Status, strings.TrimPrefix(caps.SessionLocks.Detail, "proved: "))
	}
	if r.ClaimStrategy == "" {
		if caps.SkipLocked.Supported {
			r.ClaimStrategy = dialects.ClaimSkipLocked
			r.ClaimReason = "SELECT … FOR UPDATE SKIP LOCKED lets each worker take rows no other worker holds, without waiting"
		} else {
			r.ClaimStrategy = dialects.ClaimOptimistic
			r.ClaimReason = "no working SKIP LOCKED (" + caps.SkipLocked.Detail + "); claim with UPDATE … WHERE version = ? and check the rows affected"
		}
	}
	return r
}

// ProbeSessionOps proves that ops' locks exclude a second session: on two
// connections A and B, A takes a unique probe lock, B must be refused, and
// after A releases it B must get it. Both connections are released, or
// discarded when their state is in doubt, so no lock survives.
//
// The answer is StatusYes when all of that holds, StatusStub when B got
// the lock while A held it (CockroachDB's pg_try_advisory_lock), StatusNo
// when the lock functions fail or A cannot lock a fresh name, and
// StatusUnknown when the context ended.
func ProbeSessionOps(ctx context.Context, db *sql.DB, ops SessionOps) dialects.Capability {
	if n := db.Stats().MaxOpenConnections; n == 1 {
		return dialects.CapUnknown("not probed: the connection pool allows one connection and the probe needs two", "")
	}
	name := "schedlock-probe-" + randomHex(6)
	a, err := probeConn(ctx, db)
	if err != nil {
		return dialects.CapUnknown("cannot open a connection: "+err.Error(), "")
	}
	b, err := probeConn(ctx, db)
	if err != nil {
		_ = a.Close()
		return dialects.CapUnknown("cannot open a second connection: "+err.Error(), "")
	}
	ok := false
	defer func() {
		if ok {
			_ = a.Close()
			_ = b.Close()
		} else {
			discard(a)
			discard(b)
		}
	}()
	noLock := func(what string, err error) dialects.Capability {
		if ctx.Err() != nil {
			return dialects.CapUnknown("probe interrupted: "+ctx.Err().Error(), "")
		}
		return dialects.CapNo(what+": "+err.Error(), "").Fixed(dialects.UseTableStrategy, "")
	}

	got, err := ops.TryLock(ctx, a, name)
	switch {
	case err != nil:
		return noLock("the lock function failed", err)
	case !got:
		return dialects.CapNo("a fresh lock name was refused to the first connection", "").Fixed(dialects.UseTableStrategy, "")
	}
	start := time.Now()
	second, err := ops.TryLock(ctx, b, name)
	refusedIn := time.Since(start)
	if err != nil {
		return noLock("the second connection's try failed", err)
	}
	if second {
		return dialects.CapStub("proved: both connections got the lock: the lock function is a stub that locks nothing", "").
			Fixed(dialects.UseTableStrategy, ": the lease table is a real lock")
	}
	released, err := ops.Unlock(ctx, a, name)
	if err != nil {
		return noLock("release failed", err)
	}
	if !released {
		return dialects.CapNo("the holder's release reported that it held no lock", "").Fixed(dialects.UseTableStrategy, "")
	}
	after, err := ops.TryLock(ctx, b, name)
	if err != nil {
		return noLock("the second connection's try after the release failed", err)
	}
	if !after {
		return dialects.CapNo("the lock stayed taken after its holder released it", "").Fixed(dialects.UseTableStrategy, "")
	}
	freed, err := ops.Unlock(ctx, b, name)
	if err != nil || !freed {
		return dialects.CapNo("the second connection could not release the lock it took", "").Fixed(dialects.UseTableStrategy, "")
	}
	ok = true
	return dialects.CapYes(fmt.Sprintf("proved: a second connection was refused in %s while the first held the lock, and got it once released", roundDuration(refusedIn)))
}

// ServerNow reads the server's clock on conn.
type ServerNow func(ctx context.Context, conn *sql.Conn) (time.Time, error)

// MeasureClock reads the server clock with now on one connection a few
// times and returns the reading with the shortest round trip, its skew
// taken against the host clock at the midpoint of that round trip. When
// the clock cannot be read, Measured is false and Detail says why.
func MeasureClock(ctx context.Context, db *sql.DB, now ServerNow) dialects.Clock {
	conn, err := probeConn(ctx, db)
	if err != nil {
		return dialects.Clock{Detail: "cannot read the server clock: " + oneLine(err)}
	}
	defer conn.Close()
	var best dialects.Clock
	for i := 0; i < clockSamples; i++ {
		before := time.Now()
		server, err := now(ctx, conn)
		after := time.Now()
		if err != nil {
			return dialects.Clock{Detail: "cannot read the server clock: " + oneLine(err)}
		}
		rt := after.Sub(before)
		if best.Measured && rt >= best.RoundTrip {
			continue
		}
		mid := before.Add(rt / 2)
		best = dialects.Clock{Skew: server.Sub(mid), RoundTrip: rt, Server: server.UTC(), Measured: true}
	}
	return best
}

// ParseServerTime parses a server timestamp written in UTC as
// "2006-01-02 15:04:05" with an optional fraction of a second, the text
// form of MySQL's UTC_TIMESTAMP(6) and SQLite's strftime('%Y-%m-%d
// %H:%M:%f').
func ParseServerTime(s string) (time.Time, error) {
	t, err := time.ParseInLocation("2006-01-02 15:04:05.999999999", strings.TrimSpace(s), time.UTC)
	if err != nil {
		return time.Time{}, fmt.Errorf("parse server time %q: %w", s, err)
	}
	return t, nil
}

// RowLockProbe is the SQL of the SKIP LOCKED and NOWAIT probe, written by
// a dialect for a table name no one else uses (ProbeTableName). Every
// statement addresses the probe table; Lock, SkipLocked and NoWait select
// the one row with id 1.
type RowLockProbe struct {
	Create     string // CREATE TABLE t (id INT PRIMARY KEY)
	Insert     string // INSERT INTO t (id) VALUES (1)
	Lock       string // SELECT id FROM t WHERE id = 1 FOR UPDATE
	SkipLocked string // … FOR UPDATE SKIP LOCKED; empty: not probed
	NoWait     string // … FOR UPDATE NOWAIT; empty: not probed
	Drop       string // DROP TABLE t
	// Begin, when set, starts the holder's transaction instead of the
	// driver's BEGIN (TiDB: BEGIN PESSIMISTIC).
	Begin string
	// BeginTx starts the holder's transaction with (*sql.Conn).BeginTx
	// instead of a statement, for drivers whose autocommit no statement
	// turns off (Dameng's commits every statement run outside a
	// database/sql transaction, and a committed SELECT … FOR UPDATE holds
	// nothing). Begin is then not used.
	BeginTx bool
	// NotSupported reports whether err means the server does not know the
	// syntax (a syntax or "not supported" error).
	NotSupported func(err error) bool
	// Refused reports whether err is the error NOWAIT raises on a locked
	// row (PostgreSQL 55P03, MySQL 3572, MariaDB 1205).
	Refused func(err error) bool
	// Wait bounds each statement of the second connection; a statement
	// that waits longer than this blocked on the row (default 3s).
	Wait time.Duration
}

// ProbeTableName returns a table name for a probe that no one else uses:
// "schedlock_probe_" and 12 random hex digits.
func ProbeTableName() string { return "schedlock_probe_" + randomHex(6) }

// ProveRowLocks sets caps.SkipLocked and caps.NoWait — which the caller
// set from the version's facts — by ProbeRowLocks when a probe may run:
// with readOnly, or when the user cannot create the probe table
// (canCreate false), nothing runs and both details say why. A probe that
// answered replaces the facts; one that could not run keeps them and
// SkipLocked's detail names its error, through describe (nil: the error's
// text on one line). It returns ctx's error when ctx has ended.
func ProveRowLocks(ctx context.Context, db *sql.DB, caps *dialects.Capabilities, readOnly, canCreate bool, p RowLockProbe, describe func(error) string) error {
	switch {
	case readOnly:
		caps.SkipLocked.Detail += dialects.NotProbedReadOnly
		caps.NoWait.Detail += dialects.NotProbedReadOnly
		return nil
	case !canCreate:
		caps.SkipLocked.Detail += notProbedNoCreate
		caps.NoWait.Detail += notProbedNoCreate
		return nil
	}
	skip, nowait, err := ProbeRowLocks(ctx, db, p)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if skip.Status != "" {
		caps.SkipLocked, caps.NoWait = skip, nowait
	}
	if err != nil {
		if describe == nil {
			describe = func(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
		}
		caps.SkipLocked.Detail += " (probe: " + describe(err) + ")"
	}
	return nil
}

// ProbeRowLocks runs p: it creates the probe table with one row, locks
// the row FOR UPDATE in a transaction on connection A, then on connection B
// runs p.SkipLocked (which must return no row) and p.NoWait (which must
// fail with p.Refused at once). It then rolls A back and drops the table,
// with a fresh context when ctx has ended, so nothing is left behind.
//
// The error is for a probe that could not run (table creation refused, the
// connection failed) — the caller then falls back to what the version
// says; answers, including syntax errors, come back as capabilities.
func ProbeRowLocks(ctx context.Context, db *sql.DB, p RowLockProbe) (skipLocked, noWait dialects.Capability, err error) {
	wait := p.Wait
	if wait <= 0 {
		wait = DefaultRowProbeWait
	}
	if n := db.Stats().MaxOpenConnections; n == 1 {
		return dialects.Capability{}, dialects.Capability{}, errors.New("the connection pool allows one connection and the probe needs two")
	}
	if _, err := db.ExecContext(ctx, p.Create); err != nil {
		return dialects.Capability{}, dialects.Capability{}, fmt.Errorf("create the probe table: %w", err)
	}
	cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	defer func() {
		if _, dropErr := db.ExecContext(cleanup, p.Drop); dropErr != nil && err == nil {
			err = fmt.Errorf("drop the probe table: %w", dropErr)
		}
	}()
	if _, err := db.ExecContext(ctx, p.Insert); err != nil {
		return dialects.Capability{}, dialects.Capability{}, fmt.Errorf("fill the probe table: %w", err)
	}

	a, err := probeConn(ctx, db)
	if err != nil {
		return dialects.Capability{}, dialects.Capability{}, fmt.Errorf("open the holder's connection: %w", err)
	}
	// Deferred after the DROP, so it runs before it: the holder's
	// transaction must end before DROP TABLE, which would otherwise wait for
	// its row lock (MySQL's metadata lock).
	end, err := holdProbeRow(ctx, a, p)
	defer end(cleanup)
	if err != nil {
		return dialects.Capability{}, dialects.Capability{}, err
	}

	b, err := probeConn(ctx, db)
	if err != nil {
		return dialects.Capability{}, dialects.Capability{}, fmt.Errorf("open the second connection: %w", err)
	}
	bClean := true
	defer func() {
		if bClean {
			_ = b.Close()
		} else {
			discard(b)
		}
	}()
	skipLocked, bOK := probeSkipLocked(ctx, b, p, wait)
	bClean = bClean && bOK
	if bOK {
		noWait, bOK = probeNoWait(ctx, b, p, wait)
		bClean = bClean && bOK
	} else {
		noWait = dialects.CapUnknown("not probed: the second connection was dropped after the SKIP LOCKED probe", "")
	}
	if ctx.Err() != nil {
		return dialects.Capability{}, dialects.Capability{}, ctx.Err()
	}
	return skipLocked, noWait, nil
}

// holdProbeRow starts the holder's transaction on a (p.BeginTx, p.Begin or
// BEGIN) and locks the probe row FOR UPDATE. end rolls the transaction back
// and gives a back to the pool, or discards it (always after BeginTx; else
// when its state is in doubt: a failed rollback, a lock that never
// happened), so its session ends with whatever it held.
func holdProbeRow(ctx context.Context, a *sql.Conn, p RowLockProbe) (end func(context.Context), err error) {
	if p.BeginTx {
		tx, err := a.BeginTx(ctx, nil)
		if err != nil {
			return func(context.Context) { discard(a) }, fmt.Errorf("begin the holder's transaction: %w", err)
		}
		// Rolled back and always discarded: such drivers keep transaction
		// state in the connection, and ending the session frees whatever
		// it held even where the rollback did not reach the server.
		end = func(context.Context) {
			_ = tx.Rollback()
			discard(a)
		}
		if err := queryRows(ctx, tx, p.Lock, nil); err != nil {
			return end, fmt.Errorf("lock the probe row: %w", err)
		}
		return end, nil
	}
	locked := false
	end = func(cleanup context.Context) {
		if _, err := a.ExecContext(cleanup, "ROLLBACK"); err != nil || !locked {
			discard(a)
			return
		}
		_ = a.Close()
	}
	begin := p.Begin
	if begin == "" {
		begin = "BEGIN"
	}
	if _, err := a.ExecContext(ctx, begin); err != nil {
		return end, fmt.Errorf("begin the holder's transaction: %w", err)
	}
	if err := queryRows(ctx, a, p.Lock, nil); err != nil {
		return end, fmt.Errorf("lock the probe row: %w", err)
	}
	locked = true
	return end, nil
}

// probeSkipLocked runs p.SkipLocked on b while A holds the row. ok is false
// when b's state is in doubt and it must be discarded.
func probeSkipLocked(ctx context.Context, b *sql.Conn, p RowLockProbe, wait time.Duration) (c dialects.Capability, ok bool) {
	if p.SkipLocked == "" {
		return dialects.CapUnknown("not probed", ""), true
	}
	n := 0
	err := timed(ctx, wait, func(ctx context.Context) error { return queryRows(ctx, b, p.SkipLocked, &n) })
	switch {
	case err == nil && n == 0:
		return dialects.CapYes("proved: a row locked by another connection was skipped"), true
	case err == nil:
		return dialects.CapNo("SKIP LOCKED is accepted but takes no lock: it returned a row another connection holds FOR UPDATE",
			"claim rows optimistically (UPDATE … WHERE version = ?)"), true
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return dialects.CapNo(fmt.Sprintf("SKIP LOCKED waited over %s for a locked row instead of skipping it", wait),
			"claim rows optimistically (UPDATE … WHERE version = ?)"), false
	case p.NotSupported != nil && p.NotSupported(err):
		return dialects.CapNo("not supported: "+oneLine(err), "upgrade the server, or claim rows optimistically (UPDATE … WHERE version = ?)"), true
	}
	return dialects.CapNo("SKIP LOCKED failed: "+oneLine(err), "claim rows optimistically (UPDATE … WHERE version = ?)"), false
}

// probeNoWait runs p.NoWait on b while A holds the row.
func probeNoWait(ctx context.Context, b *sql.Conn, p RowLockProbe, wait time.Duration) (c dialects.Capability, ok bool) {
	if p.NoWait == "" {
		return dialects.CapUnknown("not probed", ""), true
	}
	n := 0
	start := time.Now()
	err := timed(ctx, wait, func(ctx context.Context) error { return queryRows(ctx, b, p.NoWait, &n) })
	took := time.Since(start)
	switch {
	case err == nil:
		return dialects.CapNo("FOR UPDATE takes no lock here: NOWAIT returned a row another connection holds FOR UPDATE",
			"use pessimistic transactions (TiDB: BEGIN PESSIMISTIC or tidb_txn_mode='pessimistic')"), true
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return dialects.CapNo(fmt.Sprintf("NOWAIT waited over %s for a locked row instead of failing at once", wait), ""), false
	case p.Refused != nil && p.Refused(err):
		return dialects.CapYes(fmt.Sprintf("proved: a row locked by another connection was refused in %s (%s)", roundDuration(took), oneLine(err))), true
	case p.NotSupported != nil && p.NotSupported(err):
		return dialects.CapNo("not supported: "+oneLine(err), "upgrade the server"), true
	}
	return dialects.CapUnknown("NOWAIT failed with an unexpected error: "+oneLine(err), ""), false
}

// probeConn takes a connection from db, waiting at most connWait.
func probeConn(ctx context.Context, db *sql.DB) (*sql.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, connWait)
	defer cancel()
	return db.Conn(ctx)
}

// timed runs fn under a context that ends after d.
func timed(ctx context.Context, d time.Duration, fn func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return fn(ctx)
}

// queryRows runs query on conn, reads every row and counts them into n
// when n is not nil.
func queryRows(ctx context.Context, q interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}, query string, n *int) error {
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	count := 0
	for rows.Next() {
		count++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if n != nil {
		*n = count
	}
	return rows.Close()
}

// oneLine is err's message on one line.
func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

// roundDuration rounds d for a detail text: 0.4ms, 12ms, 1.2s.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d < time.Millisecond:
		return d.Round(10 * time.Microsecond)
	case d < time.Second:
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(10 * time.Millisecond)
}

// randomHex returns 2n random hex digits.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
