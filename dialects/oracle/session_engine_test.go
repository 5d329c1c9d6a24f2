package oracle

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/fakesql"
)

// newLocker is the session locker of this dialect on db.
func newLocker(t *testing.T, db *sql.DB) *dialects.SessionLocker {
	t.Helper()
	l := &dialects.SessionLocker{Dialect: Name, DB: db, Ops: &SessionOps{}}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// waitSent waits until sim has received n waiting REQUESTs.
func waitSent(t *testing.T, sim *oraSim, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(sim.waits()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d waiting REQUESTs sent, want %d", len(sim.waits()), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestWaitIsHandedOverOnRelease: a waiter blocks in one DBMS_LOCK.REQUEST
// with a timeout and holds the lock as soon as the holder releases it.
// The waiter's RetryEvery is an hour, so a poll could not have got it
// within the test.
func TestWaitIsHandedOverOnRelease(t *testing.T) {
	sim := newSim(t, config19c())
	db, _ := sim.open(t)
	holder, waiter := newLocker(t, db), newLocker(t, db)
	if !waiter.WaitsOnServer() {
		t.Fatal("the Oracle locker does not report a server-side wait")
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
	waitSent(t, sim, 1)
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
	if w := sim.waits(); len(w) != 1 || w[0] != 60 {
		t.Errorf("waiting REQUESTs with timeouts %v; want one of 60 s", w)
	}
}

// TestWaitTimeoutIsHeld: a REQUEST that times out (1) is ErrHeld, after
// at least the wait; a sub-second wait is sent as one whole second.
func TestWaitTimeoutIsHeld(t *testing.T) {
	sim := newSim(t, config19c())
	db, _ := sim.open(t)
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
	if w := sim.waits(); len(w) != 1 || w[0] != 1 {
		t.Errorf("waiting REQUESTs with timeouts %v; want one of 1 s (150ms rounded up)", w)
	}
}

// TestWaitCancelled: cancelling the context ends a REQUEST blocked on the
// server; its connection is closed and the holder keeps the lock.
func TestWaitCancelled(t *testing.T) {
	sim := newSim(t, config19c())
	db, _ := sim.open(t)
	holder, waiter := newLocker(t, db), newLocker(t, db)
	lease, err := holder.Acquire(t.Context(), "job", dialects.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		waitSent(t, sim, 1)
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

// TestWaitReturnCodes: the answers of a waiting REQUEST map as documented
// (WaitResult): 1 refused, 2, 3 and 5 a *DBMSLockError with that code,
// never ErrHeld.
func TestWaitReturnCodes(t *testing.T) {
	for _, code := range []int64{LockTimeout, LockDeadlock, LockParameterErr, LockIllegalLock} {
		cfg := config19c()
		sim := newSim(t, cfg)
		db, _ := sim.open(t)
		holder, waiter := newLocker(t, db), newLocker(t, db)
		if _, err := holder.Acquire(t.Context(), "job", dialects.Options{}); err != nil {
			t.Fatal(err)
		}
		sim.mu.Lock()
		sim.cfg.WaitCode = &code
		sim.mu.Unlock()
		lease, err := waiter.Acquire(t.Context(), "job", dialects.Options{Wait: time.Minute, RetryEvery: time.Hour})
		var le *DBMSLockError
		switch {
		case lease != nil:
			t.Errorf("REQUEST answered %d: got a lease", code)
		case code == LockTimeout && !errors.Is(err, dialects.ErrHeld):
			t.Errorf("REQUEST answered 1: %v; want ErrHeld", err)
		case code != LockTimeout && (!errors.As(err, &le) || le.Code != code || errors.Is(err, dialects.ErrHeld)):
			t.Errorf("REQUEST answered %d: %v; want a *DBMSLockError with that code, not ErrHeld", code, err)
		}
		if w := sim.waits(); len(w) != 1 {
			t.Errorf("code %d: %d waiting REQUESTs, want 1", code, len(w))
		}
	}
}

// TestStatementsPreparedOncePerConnection: every session-lock block is
// prepared once per lock connection, each acquire, check and release is
// one execution of its prepared statement, and so is the wait.
func TestStatementsPreparedOncePerConnection(t *testing.T) {
	sim := newSim(t, config19c())
	db, log := sim.open(t)
	l := &dialects.SessionLocker{Dialect: Name, DB: db, Ops: &SessionOps{}, MaxConns: 1, CheckEvery: time.Hour}
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
	assertPreparedOnce(t, log, tryLockSQL, unlockSQL, holdsSQL, lockSQL)

	// A wait runs the connection's prepared lockSQL.
	holder := newLocker(t, db)
	if _, err := holder.Acquire(t.Context(), "busy", dialects.Options{}); err != nil {
		t.Fatal(err)
	}
	before = len(log.Calls())
	if _, err := l.Acquire(t.Context(), "busy", dialects.Options{Wait: 10 * time.Millisecond}); !errors.Is(err, dialects.ErrHeld) {
		t.Fatalf("wait on a held lock: %v; want ErrHeld", err)
	}
	var waited bool
	for _, c := range log.Calls()[before:] {
		if c.Query == lockSQL {
			waited = true
			if !c.Prepared {
				t.Error("the wait ran without its prepared statement")
			}
		}
	}
	if !waited {
		t.Error("no waiting REQUEST was sent")
	}
	assertPreparedOnce(t, log, tryLockSQL, unlockSQL, holdsSQL, lockSQL)
}

// assertPreparedOnce checks each of queries was prepared exactly once on
// every session that prepared anything.
func assertPreparedOnce(t *testing.T, log *fakesql.Log, queries ...string) {
	t.Helper()
	perSession := map[int64]map[string]int{}
	for _, p := range log.Prepares() {
		if perSession[p.Session] == nil {
			perSession[p.Session] = map[string]int{}
		}
		perSession[p.Session][p.Query]++
	}
	if len(perSession) == 0 {
		t.Fatal("nothing was prepared")
	}
	for id, byQuery := range perSession {
		for _, q := range queries {
			if byQuery[q] != 1 {
				t.Errorf("session %d prepared %d times, want once: %q", id, byQuery[q], q)
			}
		}
	}
}
