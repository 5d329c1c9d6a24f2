package oracle

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/locktable"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// mutatedOps is SessionOps with its return-code mappings replaced, to prove
// the conformance suite catches a wrong mapping. SessionOps is a named
// field, not embedded: its prepared statements and its server-side wait
// would carry the real mappings, so only the SessionOps methods and the
// killer's are forwarded.
type mutatedOps struct {
	SessionOps              *SessionOps
	request, release, holds func(int64) (bool, error)
}

func (m mutatedOps) Holder(ctx context.Context, db *sql.DB, name string) (string, error) {
	return m.SessionOps.Holder(ctx, db, name)
}

func (m mutatedOps) Kill(ctx context.Context, db *sql.DB, sessionID string) error {
	return m.SessionOps.Kill(ctx, db, sessionID)
}

func (m mutatedOps) TryLock(ctx context.Context, conn *sql.Conn, name string) (bool, error) {
	rc, err := session.Code(ctx, conn, "REQUEST", tryLockSQL, name)
	if err != nil {
		return false, err
	}
	return m.request(rc)
}

func (m mutatedOps) Unlock(ctx context.Context, conn *sql.Conn, name string) (bool, error) {
	rc, err := session.Code(ctx, conn, "RELEASE", unlockSQL, name)
	if err != nil {
		return false, err
	}
	return m.release(rc)
}

func (m mutatedOps) Holds(ctx context.Context, conn *sql.Conn, name string) (bool, error) {
	rc, err := session.Code(ctx, conn, "REQUEST", holdsSQL, name)
	if err != nil {
		return false, err
	}
	return m.holds(rc)
}

// dbWith returns the simulated database with the dialect's lockers
// replaced by session (for the session strategy) and table (for the
// table strategy); nil keeps the real one.
func dbWith(t *testing.T, cfg simConfig, session func(*sql.DB) dialects.Locker, table func(*sql.DB, dialects.Table) dialects.TableLocker) *sqlkit.DB {
	t.Helper()
	_, real := openSim(t, cfg)
	d := *real.Dialect
	if session != nil {
		d.NewSessionLocker = func(db *sql.DB, _ dialects.Info) (dialects.Locker, error) { return session(db), nil }
	}
	if table != nil {
		d.NewTableLocker = func(db *sql.DB, _ dialects.Info, tb dialects.Table) (dialects.TableLocker, error) {
			return table(db, tb), nil
		}
	}
	return &sqlkit.DB{SQL: real.SQL, Dialect: &d, Info: real.Info}
}

// runChecks runs the named checks and returns the failures.
func runChecks(t *testing.T, db *sqlkit.DB, strategy dialects.Strategy, tables []dialects.Table, only ...string) []checks.Result {
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

// TestWrongSessionMappingsFail replaces one return-code mapping at a time
// with a plausible mistake and shows the conformance checks fail, while
// the real mapping passes the same checks on the same simulated server.
func TestWrongSessionMappingsFail(t *testing.T) {
	lockerWith := func(mutate func(*mutatedOps)) func(*sql.DB) dialects.Locker {
		return func(db *sql.DB) dialects.Locker {
			m := &mutatedOps{SessionOps: &SessionOps{}, request: RequestResult, release: ReleaseResult, holds: HoldsResult}
			if mutate != nil {
				mutate(m)
			}
			return &sqlkit.SessionLocker{Dialect: Name, DB: db, Ops: m, CheckEvery: 50 * time.Millisecond}
		}
	}
	tests := []struct {
		mistake string
		mutate  func(*mutatedOps)
		checks  []string
	}{
		{"REQUEST 1 (timeout) read as granted", func(m *mutatedOps) {
			m.request = func(rc int64) (bool, error) {
				return rc == LockSuccess || rc == LockTimeout || rc == LockAlreadyOwned, nil
			}
		}, []string{"session.contend", "session.race10"}},
		{"REQUEST 4 (already own) read as not held", func(m *mutatedOps) {
			m.holds = func(rc int64) (bool, error) { return false, nil }
		}, []string{"session.refresh"}},
		{"RELEASE 4 (not owner) read as released", func(m *mutatedOps) {
			m.release = func(rc int64) (bool, error) { return rc == LockSuccess || rc == LockAlreadyOwned, nil }
		}, []string{"session.pool-trap"}},
		{"REQUEST 0 read as a failure", func(m *mutatedOps) {
			m.request = func(rc int64) (bool, error) {
				if rc == LockSuccess {
					return false, &DBMSLockError{Call: "REQUEST", Code: rc}
				}
				return RequestResult(rc)
			}
		}, []string{"session.acquire"}},
	}
	for _, tt := range tests {
		t.Run(tt.mistake, func(t *testing.T) {
			good := runChecks(t, dbWith(t, config19c(), lockerWith(nil), nil), dialects.StrategySession, nil, tt.checks...)
			if len(good) != 0 {
				t.Fatalf("the real mapping fails %s: %v", good[0].ID, good[0].Detail)
			}
			bad := runChecks(t, dbWith(t, config19c(), lockerWith(tt.mutate), nil), dialects.StrategySession, nil, tt.checks...)
			if len(bad) == 0 {
				t.Fatalf("with %s, checks %v still pass: the suite does not catch it", tt.mistake, tt.checks)
			}
			t.Logf("caught by %s: %s", bad[0].ID, bad[0].Detail)
		})
	}
}

// racerConfig is a server on which another node always inserts a new name
// first, so every first acquire meets ORA-00001.
func racerConfig() simConfig {
	cfg := config19c()
	cfg.Racer = func(string) string { return "other-node:1:cafe" }
	return cfg
}

// TestDuplicateKeyIsHeld: an ORA-00001 from the MERGE means another node
// inserted the row first, so Acquire reports ErrHeld naming that node,
// never a plain error (Builder.IsDuplicateKey, read by the engine); and
// waiting acquirers keep trying.
func TestDuplicateKeyIsHeld(t *testing.T) {
	sim, db := openSim(t, racerConfig())
	ctx := context.Background()
	tl, err := db.TableLocker(dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = tl.Acquire(ctx, "nightly", dialects.Options{Owner: "me"})
	var held *dialects.HeldError
	if !errors.As(err, &held) || !errors.Is(err, dialects.ErrHeld) {
		t.Fatalf("acquire after ORA-00001: got %v; want a *dialects.HeldError", err)
	}
	if held.Holder != "other-node:1:cafe" || held.Until.IsZero() {
		t.Errorf("HeldError names %q until %v; want the racer and its lease end", held.Holder, held.Until)
	}
	if dups, _ := sim.Counts(); dups != 1 {
		t.Errorf("the simulated server answered ORA-00001 %d times, want 1", dups)
	}
	start := time.Now()
	_, err = tl.Acquire(ctx, "weekly", dialects.Options{Owner: "me", Wait: 150 * time.Millisecond, RetryEvery: 20 * time.Millisecond})
	if !errors.Is(err, dialects.ErrHeld) {
		t.Fatalf("waiting acquire after ORA-00001: got %v; want ErrHeld", err)
	}
	if took := time.Since(start); took < 150*time.Millisecond {
		t.Errorf("a waiting acquire gave up after %s, before its 150ms wait", took)
	}

	// The engine without the hook reports ORA-00001 as an error: the
	// mistake this test exists to catch.
	raw, err := locktable.New(db.SQL, withoutDuplicateKeyHook(), dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = raw.Acquire(ctx, "monthly", dialects.Options{Owner: "me"})
	if err == nil || errors.Is(err, dialects.ErrHeld) || !IsDuplicateKey(err) {
		t.Fatalf("without the hook, acquire gives %v; the test no longer shows the mistake", err)
	}
}

// builderWithoutHook is Builder with its locktable.DuplicateKeyer hidden
// (only the Builder and Dropper methods show through).
type builderWithoutHook struct {
	locktable.Builder
	locktable.Dropper
}

// withoutDuplicateKeyHook is Oracle's SQL without the ORA-00001 mapping:
// the engine then reports a lost insert race as an error.
func withoutDuplicateKeyHook() locktable.Builder {
	b := &Builder{}
	return builderWithoutHook{Builder: b, Dropper: b}
}

// TestDuplicateKeyAsErrorFails: without the ORA-00001 mapping (the
// builder's duplicate-key hook), the race check fails on a server where
// first inserts race; with it, it passes.
func TestDuplicateKeyAsErrorFails(t *testing.T) {
	cfg := config19c()
	cfg.InsertWindow = 20 * time.Millisecond
	tables := []dialects.Table{{Preset: dialects.PresetShedlock}}
	only := []string{"table.race10"}

	good := runChecks(t, dbWith(t, cfg, nil, nil), dialects.StrategyTable, tables, only...)
	if len(good) != 0 {
		t.Fatalf("the real mapping fails %s: %s", good[0].ID, good[0].Detail)
	}
	engineOnly := func(db *sql.DB, tb dialects.Table) dialects.TableLocker {
		l, err := locktable.New(db, withoutDuplicateKeyHook(), tb)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	bad := runChecks(t, dbWith(t, cfg, nil, engineOnly), dialects.StrategyTable, tables, only...)
	if len(bad) == 0 {
		t.Fatal("with ORA-00001 reported as an error, table.race10 still passes: the suite does not catch it")
	}
	if !strings.Contains(bad[0].Detail, "ORA-00001") {
		t.Errorf("the failure does not show the ORA-00001: %s", bad[0].Detail)
	}
	t.Logf("caught by %s: %s", bad[0].ID, bad[0].Detail)
}
