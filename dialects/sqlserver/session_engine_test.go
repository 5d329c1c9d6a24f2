package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
	"github.com/schedlock/schedlock/internal/fakesql"
)

// openLogged opens sim and returns the pool and the log of its
// statements.
func (sim *simServer) openLogged(t *testing.T) (*sql.DB, *fakesql.Log) {
	t.Helper()
	db, log := fakesql.Open(sim)
	t.Cleanup(func() { _ = db.Close() })
	return db, log
}

// waitCount is how many sp_getapplock calls waited on the server.
func (sim *simServer) waitCount() int {
	sim.mu.Lock()
	defer sim.mu.Unlock()
	return sim.waits
}

// newLocker is the session locker of this dialect on db.
func newLocker(t *testing.T, db *sql.DB) *sqlkit.SessionLocker {
	t.Helper()
	l := &sqlkit.SessionLocker{Dialect: Name, DB: db, Ops: &SessionOps{}}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// count is how many statements in log contain part.
func count(log *fakesql.Log, part string) int {
	n := 0
	for _, q := range log.Statements() {
		if strings.Contains(q, part) {
			n++
		}
	}
	return n
}

// TestWaitIsHandedOverOnRelease: a waiter blocks in one sp_getapplock
// with @LockTimeout on the server and holds the lock as soon as the holder
// releases it. The waiter's RetryEvery is an hour, so a poll could not
// have got it within the test.
func TestWaitIsHandedOverOnRelease(t *testing.T) {
	sim := newSim()
	db, log := sim.openLogged(t)
	holder, waiter := newLocker(t, db), newLocker(t, db)
	if !waiter.WaitsOnServer() {
		t.Fatal("the SQL Server locker does not report a server-side wait")
	}
	lease, err := holder.Acquire(t.Context(), "job", dialects.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		l, err := waiter.Acquire(t.Context(), "job", dialects.Options{Wait: time.Minute, RetryEvery: time.Hour})
		if err == nil {
			err = l.Release(t.Context())
		}
		got <- err
	}()
	// The waiter is blocked on the server once its wait was sent.
	deadline := time.Now().Add(10 * time.Second)
	for count(log, "@LockTimeout = @p2") == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the waiter never sent its server-side wait")
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-got:
		t.Fatalf("the waiter finished while the lock was held: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	if err := lease.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("waiter: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter did not get the lock after its release")
	}
	if n := count(log, "@LockTimeout = @p2"); n != 1 {
		t.Errorf("%d server-side waits sent, want 1 (no polling)", n)
	}
}

// TestWaitTimeoutIsHeld: a wait that runs out (-1) is ErrHeld, after at
// least the wait.
func TestWaitTimeoutIsHeld(t *testing.T) {
	sim := newSim()
	db, _ := sim.openLogged(t)
	holder, waiter := newLocker(t, db), newLocker(t, db)
	if _, err := holder.Acquire(t.Context(), "job", dialects.Options{}); err != nil {
		t.Fatal(err)
	}
	const wait = 150 * time.Millisecond
	start := time.Now()
	_, err := waiter.Acquire(t.Context(), "job", dialects.Options{Wait: wait, RetryEvery: time.Hour})
	if !errors.Is(err, dialects.ErrHeld) {
		t.Fatalf("a wait that ran out: %v; want ErrHeld", err)
	}
	if took := time.Since(start); took < wait {
		t.Errorf("gave up after %s, before the %s wait", took, wait)
	}
	if n := sim.waitCount(); n != 1 {
		t.Errorf("%d server-side waits, want 1", n)
	}
}

// TestWaitCancelled: cancelling the context ends a wait blocked on the
// server; its connection is closed (the server ends the session) and the
// holder keeps the lock.
func TestWaitCancelled(t *testing.T) {
	sim := newSim()
	db, log := sim.openLogged(t)
	holder, waiter := newLocker(t, db), newLocker(t, db)
	lease, err := holder.Acquire(t.Context(), "job", dialects.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		for count(log, "@LockTimeout = @p2") == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err = waiter.Acquire(ctx, "job", dialects.Options{Wait: time.Minute, RetryEvery: time.Hour})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled wait: %v; want context.Canceled", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for waiter.Conns() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the waiter still has %d lock connections after its wait was cancelled", waiter.Conns())
		}
		time.Sleep(time.Millisecond)
	}
	if err := lease.Refresh(t.Context()); err != nil {
		t.Fatalf("the holder lost its lock when the wait was cancelled: %v", err)
	}
}

// TestWaitReturnCodes: sp_getapplock's failure codes on the wait map as
// documented: -1 refused, -2, -3 and -999 errors matching their sentinel
// and never ErrHeld.
func TestWaitReturnCodes(t *testing.T) {
	for code, want := range map[int]error{-1: dialects.ErrHeld, -2: ErrLockCanceled, -3: ErrDeadlockVictim, -999: ErrLockCall} {
		sim := newSim()
		db, _ := sim.openLogged(t)
		holder, waiter := newLocker(t, db), newLocker(t, db)
		if _, err := holder.Acquire(t.Context(), "job", dialects.Options{}); err != nil {
			t.Fatal(err)
		}
		sim.mu.Lock()
		sim.waitCode = &code
		sim.mu.Unlock()
		lease, err := waiter.Acquire(t.Context(), "job", dialects.Options{Wait: time.Minute, RetryEvery: time.Hour})
		if lease != nil || !errors.Is(err, want) {
			t.Errorf("wait answered %d: %v, %v; want an error matching %v", code, lease, err, want)
		}
		if code != -1 && errors.Is(err, dialects.ErrHeld) {
			t.Errorf("wait answered %d and was reported as held: %v", code, err)
		}
		if n := sim.waitCount(); n != 1 {
			t.Errorf("code %d: %d server-side waits, want 1", code, n)
		}
	}
}

// TestLockTimeoutMs: whole milliseconds rounded up, never 0 (no wait) or
// negative (forever), capped at int's maximum.
func TestLockTimeoutMs(t *testing.T) {
	for wait, want := range map[time.Duration]int64{
		time.Nanosecond:              1,
		time.Millisecond:             1,
		1500 * time.Microsecond:      2,
		400 * time.Millisecond:       400,
		time.Duration(math.MaxInt64): math.MaxInt32,
	} {
		if got := lockTimeoutMs(wait); got != want {
			t.Errorf("lockTimeoutMs(%s) = %d, want %d", wait, got, want)
		}
	}
}

// TestStatementsPreparedOncePerConnection: every lock statement is
// prepared once per lock connection, and each acquire, check and release
// is one statement.
func TestStatementsPreparedOncePerConnection(t *testing.T) {
	sim := newSim()
	db, log := sim.openLogged(t)
	l := &sqlkit.SessionLocker{Dialect: Name, DB: db, Ops: &SessionOps{}, MaxConns: 1, CheckEvery: time.Hour}
	t.Cleanup(func() { _ = l.Close() })
	const cycles = 20
	before := len(log.Calls())
	for range cycles {
		lease, err := l.Acquire(t.Context(), "job", dialects.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := lease.Refresh(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := lease.Release(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	calls := log.Calls()[before:]
	if len(calls) != 3*cycles {
		t.Errorf("%d cycles sent %d statements, want %d (one per acquire, refresh and release)", cycles, len(calls), 3*cycles)
	}
	for _, c := range calls {
		if !c.Prepared {
			t.Errorf("sent without its prepared statement: %q", c.Query)
		}
	}
	perSession := map[int64]map[string]int{}
	for _, p := range log.Prepares() {
		if perSession[p.Session] == nil {
			perSession[p.Session] = map[string]int{}
		}
		perSession[p.Session][p.Query]++
	}
	if len(perSession) != 1 {
		t.Fatalf("statements prepared on %d connections, want 1: %v", len(perSession), perSession)
	}
	for _, byQuery := range perSession {
		for _, q := range []string{tryLockSQL, unlockSQL, holdsSQL} {
			if byQuery[q] != 1 {
				t.Errorf("prepared %d times, want once: %q", byQuery[q], q)
			}
		}
	}
}
