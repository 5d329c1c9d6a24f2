// Package dbmslocktest is the engine suite of the DBMS_LOCK dialects
// (Oracle, Dameng): the sqlkit.SessionLocker's server-side waits and
// prepared statements over a dialect's DBMS_LOCK simulator.
package dbmslocktest

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/dbmslock"
	"github.com/schedlock/schedlock/dialects/sqlkit"
	"github.com/schedlock/schedlock/internal/fakesql"
)

// Sim is one dialect's DBMS_LOCK simulator.
type Sim interface {
	// Open connects to the simulator: a database and its statement log.
	Open(t *testing.T) (*sql.DB, *fakesql.Log)
	// Waits returns the timeouts of the REQUESTs that waited, in order.
	Waits() []int64
	// AnswerWaitsWith makes every later waiting REQUEST answer code.
	AnswerWaitsWith(code int64)
}

// Dialect is what the suite needs of a DBMS_LOCK dialect.
type Dialect struct {
	// Name is the dialect's name, Title its name in messages.
	Name, Title string
	// Ops returns a new SessionOps of the dialect.
	Ops func() sqlkit.SessionOps
	// Blocks are the dialect's statements, as the simulator receives them.
	Blocks dbmslock.Blocks
	// NewSim starts a simulator of a server with DBMS_LOCK granted.
	NewSim func(t *testing.T) Sim
}

// Run runs the suite on d.
func Run(t *testing.T, d Dialect) {
	for _, tc := range []struct {
		name string
		test func(*testing.T, Dialect)
	}{
		{"WaitIsHandedOverOnRelease", testWaitIsHandedOverOnRelease},
		{"WaitTimeoutIsHeld", testWaitTimeoutIsHeld},
		{"WaitCancelled", testWaitCancelled},
		{"WaitReturnCodes", testWaitReturnCodes},
		{"StatementsPreparedOncePerConnection", testStatementsPreparedOncePerConnection},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, d) })
	}
}

// newLocker is the session locker of this dialect on db.
func newLocker(t *testing.T, d Dialect, db *sql.DB) *sqlkit.SessionLocker {
	t.Helper()
	l := &sqlkit.SessionLocker{Dialect: d.Name, DB: db, Ops: d.Ops()}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// waitSent waits until sim has received n waiting REQUESTs.
func waitSent(t *testing.T, sim Sim, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(sim.Waits()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d waiting REQUESTs sent, want %d", len(sim.Waits()), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// testWaitIsHandedOverOnRelease: a waiter blocks in one DBMS_LOCK.REQUEST
// with a timeout and holds the lock as soon as the holder releases it.
// The waiter's RetryEvery is an hour, so a poll could not have got it
// within the test.
func testWaitIsHandedOverOnRelease(t *testing.T, d Dialect) {
	sim := d.NewSim(t)
	db, _ := sim.Open(t)
	holder, waiter := newLocker(t, d, db), newLocker(t, d, db)
	if !waiter.WaitsOnServer() {
		t.Fatalf("the %s locker does not report a server-side wait", d.Title)
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
	if w := sim.Waits(); len(w) != 1 || w[0] != 60 {
		t.Errorf("waiting REQUESTs with timeouts %v; want one of 60 s", w)
	}
}

// testWaitTimeoutIsHeld: a REQUEST that times out (1) is ErrHeld, after
// at least the wait; a sub-second wait is sent as one whole second.
func testWaitTimeoutIsHeld(t *testing.T, d Dialect) {
	sim := d.NewSim(t)
	db, _ := sim.Open(t)
	holder, waiter := newLocker(t, d, db), newLocker(t, d, db)
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
	if w := sim.Waits(); len(w) != 1 || w[0] != 1 {
		t.Errorf("waiting REQUESTs with timeouts %v; want one of 1 s (150ms rounded up)", w)
	}
}

// testWaitCancelled: cancelling the context ends a REQUEST blocked on the
// server; its connection is closed and the holder keeps the lock.
func testWaitCancelled(t *testing.T, d Dialect) {
	sim := d.NewSim(t)
	db, _ := sim.Open(t)
	holder, waiter := newLocker(t, d, db), newLocker(t, d, db)
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

// testWaitReturnCodes: the answers of a waiting REQUEST map as documented
// (dbmslock.WaitResult): 1 refused, 2, 3 and 5 a *dbmslock.Error with that code,
// never ErrHeld.
func testWaitReturnCodes(t *testing.T, d Dialect) {
	for _, code := range []int64{dbmslock.LockTimeout, dbmslock.LockDeadlock, dbmslock.LockParameterErr, dbmslock.LockIllegalLock} {
		sim := d.NewSim(t)
		db, _ := sim.Open(t)
		holder, waiter := newLocker(t, d, db), newLocker(t, d, db)
		if _, err := holder.Acquire(t.Context(), "job", dialects.Options{}); err != nil {
			t.Fatal(err)
		}
		sim.AnswerWaitsWith(code)
		lease, err := waiter.Acquire(t.Context(), "job", dialects.Options{Wait: time.Minute, RetryEvery: time.Hour})
		var le *dbmslock.Error
		switch {
		case lease != nil:
			t.Errorf("REQUEST answered %d: got a lease", code)
		case code == dbmslock.LockTimeout && !errors.Is(err, dialects.ErrHeld):
			t.Errorf("REQUEST answered 1: %v; want ErrHeld", err)
		case code != dbmslock.LockTimeout && (!errors.As(err, &le) || le.Code != code || errors.Is(err, dialects.ErrHeld)):
			t.Errorf("REQUEST answered %d: %v; want a *dbmslock.Error with that code, not ErrHeld", code, err)
		}
		if w := sim.Waits(); len(w) != 1 {
			t.Errorf("code %d: %d waiting REQUESTs, want 1", code, len(w))
		}
	}
}

// testStatementsPreparedOncePerConnection: every session-lock block is
// prepared once per lock connection, each acquire, check and release is
// one execution of its prepared statement, and so is the wait.
func testStatementsPreparedOncePerConnection(t *testing.T, d Dialect) {
	sim := d.NewSim(t)
	db, log := sim.Open(t)
	l := &sqlkit.SessionLocker{Dialect: d.Name, DB: db, Ops: d.Ops(), MaxConns: 1, CheckEvery: time.Hour}
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
	assertPreparedOnce(t, log, d.Blocks.TryLock, d.Blocks.Unlock, d.Blocks.Holds, d.Blocks.Lock)

	// A wait runs the connection's prepared lockSQL.
	holder := newLocker(t, d, db)
	if _, err := holder.Acquire(t.Context(), "busy", dialects.Options{}); err != nil {
		t.Fatal(err)
	}
	before = len(log.Calls())
	if _, err := l.Acquire(t.Context(), "busy", dialects.Options{Wait: 10 * time.Millisecond}); !errors.Is(err, dialects.ErrHeld) {
		t.Fatalf("wait on a held lock: %v; want ErrHeld", err)
	}
	var waited bool
	for _, c := range log.Calls()[before:] {
		if c.Query == d.Blocks.Lock {
			waited = true
			if !c.Prepared {
				t.Error("the wait ran without its prepared statement")
			}
		}
	}
	if !waited {
		t.Error("no waiting REQUEST was sent")
	}
	assertPreparedOnce(t, log, d.Blocks.TryLock, d.Blocks.Unlock, d.Blocks.Holds, d.Blocks.Lock)
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
