package oraliketest

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/dbmslock"
	"github.com/schedlock/schedlock/dialects/locktable"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// RunMappings proves that the conformance checks catch a wrong reading of
// the server's answers: each DBMS_LOCK return-code mapping replaced by a
// plausible mistake, a REQUEST that grants an owned lock again, and a
// duplicate key from the MERGE read as an error, each fail checks that
// the real mapping passes on the same simulated server; and that a
// duplicate key is reported as held by the racer.
func RunMappings(t *testing.T, m Suite) {
	t.Run("WrongSessionMappingsFail", func(t *testing.T) { testWrongSessionMappings(t, m) })
	t.Run("ReRequestThatGrantsAgainIsCaught", func(t *testing.T) { testReRequestGrants(t, m) })
	t.Run("DuplicateKeyIsHeld", func(t *testing.T) { testDuplicateKeyIsHeld(t, m) })
	t.Run("DuplicateKeyAsErrorFails", func(t *testing.T) { testDuplicateKeyAsError(t, m) })
}

// runChecks runs the named checks and returns the failures.
func runChecks(t *testing.T, db Backend, strategy dialects.Strategy, tables []dialects.Table, only ...string) []checks.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := checks.Run(ctx, checks.Config{Backend: db, Strategies: []dialects.Strategy{strategy}, Tables: tables, Only: only})
	if err != nil {
		t.Fatalf("run checks: %v", err)
	}
	var failed []checks.Result
	for _, r := range rep.Results {
		if r.Status == checks.StatusFail {
			failed = append(failed, r)
		}
	}
	return failed
}

// mutatedOps is a dialect's session operations with their return-code
// mappings replaced. The blocks run one by one (Session.Code), not
// prepared and without the server-side wait, which would carry the real
// mappings.
type mutatedOps struct {
	s                       *dbmslock.Session
	request, release, holds func(int64) (bool, error)
}

func (m mutatedOps) call(ctx context.Context, conn *sql.Conn, call, block, name string, result func(int64) (bool, error)) (bool, error) {
	rc, err := m.s.Code(ctx, conn, call, block, name)
	if err != nil {
		return false, err
	}
	return result(rc)
}

func (m mutatedOps) TryLock(ctx context.Context, conn *sql.Conn, name string) (bool, error) {
	return m.call(ctx, conn, "REQUEST", m.s.Blocks.TryLock, name, m.request)
}

func (m mutatedOps) Unlock(ctx context.Context, conn *sql.Conn, name string) (bool, error) {
	return m.call(ctx, conn, "RELEASE", m.s.Blocks.Unlock, name, m.release)
}

func (m mutatedOps) Holds(ctx context.Context, conn *sql.Conn, name string) (bool, error) {
	return m.call(ctx, conn, "REQUEST", m.s.Blocks.Holds, name, m.holds)
}

// testWrongSessionMappings replaces one return-code mapping at a time
// with a plausible mistake and shows the conformance checks fail, while
// the real mapping passes the same checks on the same simulated server.
func testWrongSessionMappings(t *testing.T, m Suite) {
	lockerWith := func(mutate func(*mutatedOps)) func(*sql.DB) dialects.Locker {
		return func(db *sql.DB) dialects.Locker {
			ops := &mutatedOps{s: m.Session,
				request: dbmslock.RequestResult, release: dbmslock.ReleaseResult, holds: dbmslock.HoldsResult}
			if mutate != nil {
				mutate(ops)
			}
			return &sqlkit.SessionLocker{Dialect: m.Name, DB: db, Ops: ops, CheckEvery: 50 * time.Millisecond}
		}
	}
	tests := []struct {
		mistake string
		mutate  func(*mutatedOps)
		checks  []string
	}{
		{"REQUEST 1 (timeout) read as granted", func(o *mutatedOps) {
			o.request = func(rc int64) (bool, error) {
				return rc == dbmslock.LockSuccess || rc == dbmslock.LockTimeout || rc == dbmslock.LockAlreadyOwned, nil
			}
		}, []string{"session.contend", "session.race10"}},
		{"REQUEST 4 (already own) read as not held", func(o *mutatedOps) {
			o.holds = func(rc int64) (bool, error) { return false, nil }
		}, []string{"session.refresh"}},
		{"RELEASE 4 (not owner) read as released", func(o *mutatedOps) {
			o.release = func(rc int64) (bool, error) {
				return rc == dbmslock.LockSuccess || rc == dbmslock.LockAlreadyOwned, nil
			}
		}, []string{"session.pool-trap"}},
		{"REQUEST 0 read as a failure", func(o *mutatedOps) {
			o.request = func(rc int64) (bool, error) {
				if rc == dbmslock.LockSuccess {
					return false, &dbmslock.Error{Call: "REQUEST", Code: rc}
				}
				return dbmslock.RequestResult(rc)
			}
		}, []string{"session.acquire"}},
	}
	for _, tt := range tests {
		t.Run(tt.mistake, func(t *testing.T) {
			_, good := m.Open(t, Config{DBMSLock: true}, lockerWith(nil), nil)
			if failed := runChecks(t, good, dialects.StrategySession, nil, tt.checks...); len(failed) != 0 {
				t.Fatalf("the real mapping fails %s: %v", failed[0].ID, failed[0].Detail)
			}
			_, bad := m.Open(t, Config{DBMSLock: true}, lockerWith(tt.mutate), nil)
			failed := runChecks(t, bad, dialects.StrategySession, nil, tt.checks...)
			if len(failed) == 0 {
				t.Fatalf("with %s, checks %v still pass: the suite does not catch it", tt.mistake, tt.checks)
			}
			t.Logf("caught by %s: %s", failed[0].ID, failed[0].Detail)
		})
	}
}

// testReRequestGrants: were REQUEST of a lock the session already owns to
// answer 0 instead of 4 and take it again (as IvorySQL's emulation did,
// IvorySQL#1598), the Holds block would see 0. The suite must then fail
// loudly (the lease is reported lost and its connection dropped, which
// frees the lock), never pass on a wrong answer, and no lock may stay
// behind.
func testReRequestGrants(t *testing.T, m Suite) {
	sim, db := m.Open(t, Config{DBMSLock: true}, nil, nil)
	sim.Mu.Lock()
	sim.Locks.ReRequestGrants = true
	sim.Mu.Unlock()
	failed := runChecks(t, db, dialects.StrategySession, nil, "session.refresh")
	if len(failed) == 0 {
		t.Fatal("a REQUEST that answers 0 for an owned lock passes session.refresh: the suite would not notice")
	}
	if !strings.Contains(failed[0].Detail, "lease lost") {
		t.Errorf("the failure does not report the lost lease: %s", failed[0].Detail)
	}
	if n := sim.HeldLocks(); n != 0 {
		t.Errorf("%d DBMS_LOCK locks left held after the lost lease", n)
	}
	t.Logf("caught by %s: %s", failed[0].ID, failed[0].Detail)
}

// withoutDuplicateKey is the dialect's SQL with its
// locktable.DuplicateKeyer hidden (only the Builder and Dropper methods
// show through): the engine then reports a lost insert race as an error.
func withoutDuplicateKey(b Builder) locktable.Builder {
	return struct {
		locktable.Builder
		locktable.Dropper
	}{b, b}
}

// testDuplicateKeyIsHeld: a duplicate key from the MERGE means another
// node inserted the row first, so Acquire reports ErrHeld naming that
// node, never a plain error (the builder's IsDuplicateKey, read by the
// engine); and waiting acquirers keep trying.
func testDuplicateKeyIsHeld(t *testing.T, m Suite) {
	sim, db := m.Open(t, Config{Racer: func(string) string { return "other-node:1:cafe" }}, nil, nil)
	ctx := context.Background()
	tl, err := db.Kit().TableLocker(dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = tl.Acquire(ctx, "nightly", dialects.Options{Owner: "me"})
	var held *dialects.HeldError
	if !errors.As(err, &held) || !errors.Is(err, dialects.ErrHeld) {
		t.Fatalf("acquire after %s: got %v; want a *dialects.HeldError", m.DuplicateKey, err)
	}
	if held.Holder != "other-node:1:cafe" || held.Until.IsZero() {
		t.Errorf("HeldError names %q until %v; want the racer and its lease end", held.Holder, held.Until)
	}
	if dups, _ := sim.Counts(); dups != 1 {
		t.Errorf("the simulated server answered %s %d times, want 1", m.DuplicateKey, dups)
	}
	start := time.Now()
	_, err = tl.Acquire(ctx, "weekly", dialects.Options{Owner: "me", Wait: 150 * time.Millisecond, RetryEvery: 20 * time.Millisecond})
	if !errors.Is(err, dialects.ErrHeld) {
		t.Fatalf("waiting acquire after %s: got %v; want ErrHeld", m.DuplicateKey, err)
	}
	if took := time.Since(start); took < 150*time.Millisecond {
		t.Errorf("a waiting acquire gave up after %s, before its 150ms wait", took)
	}

	// The engine without the mapping reports the duplicate key as an
	// error: the mistake this test exists to catch.
	raw, err := locktable.New(db.Kit().SQL, withoutDuplicateKey(m.Builder), dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = raw.Acquire(ctx, "monthly", dialects.Options{Owner: "me"})
	if err == nil || errors.Is(err, dialects.ErrHeld) || !m.IsDuplicateKey(err) {
		t.Fatalf("without the mapping, acquire gives %v; the test no longer shows the mistake", err)
	}
}

// testDuplicateKeyAsError: with the duplicate key read as an error, the
// race check fails on a server where first inserts race; with the real
// mapping, it passes.
func testDuplicateKeyAsError(t *testing.T, m Suite) {
	cfg := Config{InsertWindow: 20 * time.Millisecond}
	tables := []dialects.Table{{Preset: dialects.PresetShedlock}}
	only := []string{"table.race10"}

	_, good := m.Open(t, cfg, nil, nil)
	if failed := runChecks(t, good, dialects.StrategyTable, tables, only...); len(failed) != 0 {
		t.Fatalf("the real mapping fails %s: %s", failed[0].ID, failed[0].Detail)
	}
	withoutMapping := func(db *sql.DB, tb dialects.Table) dialects.TableLocker {
		l, err := locktable.New(db, withoutDuplicateKey(m.Builder), tb)
		if err != nil {
			t.Fatal(err)
		}
		return m.TableLocker(l)
	}
	_, bad := m.Open(t, cfg, nil, withoutMapping)
	failed := runChecks(t, bad, dialects.StrategyTable, tables, only...)
	if len(failed) == 0 {
		t.Fatalf("with %s reported as an error, table.race10 still passes: the suite does not catch it", m.DuplicateKey)
	}
	if !strings.Contains(failed[0].Detail, m.DuplicateKey) {
		t.Errorf("the failure does not show the %s: %s", m.DuplicateKey, failed[0].Detail)
	}
	t.Logf("caught by %s: %s", failed[0].ID, failed[0].Detail)
}
