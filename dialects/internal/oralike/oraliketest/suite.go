package oraliketest

import (
	"context"
	"database/sql"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
	"github.com/schedlock/schedlock/dialects/internal/dbmslock"
	"github.com/schedlock/schedlock/dialects/internal/dbmslock/dbmslocktest"
	"github.com/schedlock/schedlock/dialects/internal/leasesim"
	"github.com/schedlock/schedlock/dialects/internal/oralike"
	"github.com/schedlock/schedlock/dialects/locktable"
	"github.com/schedlock/schedlock/dialects/locktable/locktabletest"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// Suite is a dialect as RunSimulated and RunMappings test it on its
// simulator.
type Suite struct {
	// Name is the dialect's registry name, Title its name in messages.
	Name, Title string
	// Session runs the dialect's DBMS_LOCK blocks; Ops returns a new
	// SessionOps of the dialect.
	Session *dbmslock.Session
	Ops     func() SessionOps
	// Open starts the dialect's simulated server (its default version,
	// every grant) with its shared part as cfg says (Tables defaulting to
	// one table per preset), and returns it with the backend its New
	// opened on it, whose session and table lockers are replaced by
	// session and table unless nil (WithLockers).
	Open func(t *testing.T, cfg Config, session func(*sql.DB) dialects.Locker, table func(*sql.DB, dialects.Table) dialects.TableLocker) (*Server, Backend)
	// Builder is the dialect's lease-table SQL; TableLocker makes the
	// dialect's table locker of an engine on it.
	Builder     Builder
	TableLocker func(*locktable.Locker) dialects.TableLocker
	// IsDuplicateKey is the dialect's reading of a duplicate key, and
	// DuplicateKey how its error shows in a message ("ORA-00001").
	IsDuplicateKey func(error) bool
	DuplicateKey   string
	// SessionID matches a session id Holder returns.
	SessionID *regexp.Regexp
	// CheckStatement returns what is wrong with a statement the session
	// strategy sent, or "" (every statement is also checked to name
	// DBMS_LOCK with its schema).
	CheckStatement func(q string) string
}

// SessionOps is a dialect's SessionOps: the DBMS_LOCK blocks.
type SessionOps = sqlkit.SessionOps

// RunSimulated runs on the simulated server the lock contract
// (dialecttest.Run) for both strategies, a writer time zone's table, the
// row-deleting preset, pausing, the session operations one by one, the
// capability probe on a server with every grant, and the
// DBMS_LOCK engine suite (dbmslocktest.Run: server-side waits, statements
// prepared once per lock connection).
func RunSimulated(t *testing.T, s Suite) {
	t.Run("Conformance", func(t *testing.T) { testConformance(t, s) })
	t.Run("TimeZone", func(t *testing.T) { testTimeZone(t, s) })
	t.Run("SysSchedLockRows", func(t *testing.T) { testSysSchedLockRows(t, s) })
	t.Run("Pause", func(t *testing.T) {
		_, db := s.Open(t, Config{}, nil, nil)
		locktabletest.RunPause(t, db.Kit())
	})
	t.Run("SessionOps", func(t *testing.T) { testSessionOps(t, s) })
	t.Run("Probe", func(t *testing.T) { testProbe(t, s) })
	t.Run("Engine", func(t *testing.T) {
		dbmslocktest.Run(t, dbmslocktest.Dialect{
			Name:   s.Name,
			Title:  s.Title,
			Ops:    func() sqlkit.SessionOps { return s.Ops() },
			Blocks: s.Session.Blocks,
			NewSim: func(t *testing.T) dbmslocktest.Sim {
				sim, _ := s.Open(t, Config{DBMSLock: true}, nil, nil)
				return EngineSim(sim)
			},
		})
	})
}

// clockAhead puts the database clock ahead of the host's, so that lease
// arithmetic done on the host clock fails the expiry checks.
const clockAhead = 2500 * time.Millisecond

// testConformance runs the whole lock-contract suite: the table strategy
// on every preset (on a server without DBMS_LOCK where the database ships
// without it), then the DBMS_LOCK session strategy (including the kill
// check). Fresh names are inserted with a 5ms window in which a
// concurrent MERGE wins, so the contention and race checks meet the
// duplicate key and prove it means "held".
func testConformance(t *testing.T, s Suite) {
	t.Run("table", func(t *testing.T) {
		sim, db := s.Open(t, Config{InsertWindow: 5 * time.Millisecond, ClockOffset: clockAhead}, nil, nil)
		dialecttest.Run(t, db, dialecttest.Options{Strategies: []dialects.Strategy{dialects.StrategyTable}, Tables: PresetTables()})
		sim.AssertUnderstood(t)
		dups, merges := sim.Counts()
		if dups == 0 {
			t.Errorf("no MERGE of %d met %s: the duplicate-key path was not exercised", merges, s.DuplicateKey)
		}
		t.Logf("%d MERGEs, %d answered %s and were reported as held", merges, dups, s.DuplicateKey)
	})
	t.Run("session", func(t *testing.T) {
		sim, db := s.Open(t, Config{DBMSLock: true}, nil, nil)
		dialecttest.Run(t, db, dialecttest.Options{Strategies: []dialects.Strategy{dialects.StrategySession}})
		sim.AssertUnderstood(t)
		if n := sim.HeldLocks(); n != 0 {
			t.Errorf("%d DBMS_LOCK locks still held after the suite", n)
		}
	})
}

// testTimeZone: ShedLock's table in a New York writer time zone passes the
// whole lock contract, and a row a New York JVM wrote (the simulator keeps
// instants and shows them as New York's wall-clock time) reads held until
// its lease ends and is not taken.
func testTimeZone(t *testing.T, s Suite) {
	table := dialects.Table{Preset: dialects.PresetShedlock, TimeZone: "America/New_York"}
	sim, db := s.Open(t, Config{ClockOffset: clockAhead, Tables: []dialects.Table{table}}, nil, nil)
	dialecttest.Run(t, db, dialecttest.Options{Strategies: []dialects.Strategy{dialects.StrategyTable}, Tables: []dialects.Table{table}})
	sim.AssertUnderstood(t)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tl, err := db.Kit().TableLocker(table)
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	now := sim.D.Now().Truncate(time.Millisecond)
	sim.Mu.Lock()
	sim.Tables["SHEDLOCK"].Rows["report"] = &leasesim.Row{Name: "report", Owner: "jvm-ny", LockedAt: now, Until: now.Add(10 * time.Minute)}
	sim.Mu.Unlock()
	row, found, err := tl.Inspect(ctx, "report")
	if err != nil || !found || row.Expired() || !row.Until.Equal(now.Add(10*time.Minute)) {
		t.Fatalf("the JVM's row = %+v, %v, %v; want held until %s", row, found, err, now.Add(10*time.Minute))
	}
	if _, err := tl.Acquire(ctx, "report", dialects.Options{Owner: "schedlock", AtMost: time.Minute}); !errors.Is(err, dialects.ErrHeld) {
		t.Fatalf("acquire of the JVM's live lock: %v, want held", err)
	}
	sim.AssertUnderstood(t)
}

// testSysSchedLockRows: the sys_sched_lock statements, run from their text
// by the simulator, delete the row on release, keep an early release's
// row until at-least, and delete on a forced unlock.
func testSysSchedLockRows(t *testing.T, s Suite) {
	_, db := s.Open(t, Config{}, nil, nil)
	tl, err := db.Kit().TableLocker(dialects.Table{Preset: dialects.PresetSysSchedLock})
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.CreateTable(t.Context()); err != nil {
		t.Fatal(err)
	}
	locktabletest.CheckRowDeletingRelease(t, tl)
}

// unqualified is DBMS_LOCK named without its schema, which a local object
// called DBMS_LOCK could stand in for.
var unqualified = regexp.MustCompile(`(^|[^.A-Za-z_])DBMS_LOCK\.`)

// testSessionOps drives TryLock, Holds, Unlock on two sessions and the
// LockAdmin's SessionLock
// and checks each statement's answer.
func testSessionOps(t *testing.T, s Suite) {
	sim, sdb := s.Open(t, Config{DBMSLock: true}, nil, nil)
	db := sdb.Kit().SQL
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pin := func() *sql.Conn {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	ops := s.Ops()
	admin := sdb.Kit().LockAdmin()
	holderOf := func(name string) (string, error) {
		e, found, err := admin.SessionLock(ctx, name)
		if err != nil || !found || e.Holder == nil {
			return "", err
		}
		return e.Holder.SessionID, nil
	}
	a, b := pin(), pin()
	step := func(what string, got bool, err error, want bool) {
		t.Helper()
		if err != nil || got != want {
			t.Fatalf("%s: got %v, %v; want %v", what, got, err, want)
		}
	}
	got, err := ops.TryLock(ctx, a, "job")
	step("A takes a free lock", got, err, true)
	got, err = ops.TryLock(ctx, a, "job")
	step("A asks again (REQUEST 4, already own)", got, err, true)
	got, err = ops.TryLock(ctx, b, "job")
	step("B is refused (REQUEST 1, timeout)", got, err, false)
	got, err = ops.Holds(ctx, a, "job")
	step("A holds it", got, err, true)
	got, err = ops.Holds(ctx, b, "job")
	step("B does not", got, err, false)
	got, err = ops.Unlock(ctx, b, "job")
	step("B cannot release A's lock (RELEASE 4)", got, err, false)
	holder, err := holderOf("job")
	if err != nil || !s.SessionID.MatchString(holder) {
		t.Fatalf("Holder = %q, %v; want A's session id (%s)", holder, err, s.SessionID)
	}
	got, err = ops.Unlock(ctx, a, "job")
	step("A releases it (RELEASE 0)", got, err, true)
	got, err = ops.Holds(ctx, a, "job")
	step("A no longer holds it (REQUEST 0, given back)", got, err, false)
	if holder, err := holderOf("job"); err != nil || holder != "" {
		t.Fatalf("Holder of a free lock = %q, %v; want none", holder, err)
	}
	got, err = ops.TryLock(ctx, b, "job")
	step("B takes it after the Holds probe gave back what it took", got, err, true)
	if holder, err := holderOf("nobody-holds-this"); err != nil || holder != "" {
		t.Errorf("Holder of a lock never taken = %q, %v; want none", holder, err)
	}
	for _, q := range sim.Log.Statements() {
		if unqualified.MatchString(q) {
			t.Errorf("a statement names DBMS_LOCK without its schema:\n%s", q)
		}
		if s.CheckStatement != nil {
			if wrong := s.CheckStatement(q); wrong != "" {
				t.Errorf("%s:\n%s", wrong, q)
			}
		}
	}
	sim.AssertUnderstood(t)
}

// testProbe proves every capability on a server with DBMS_LOCK and every
// grant: DBMS_LOCK on two connections, SKIP LOCKED and NOWAIT on a probe
// table that is dropped again, the lock views, the privilege that ends
// sessions, and the clock (ahead of the host's).
func testProbe(t *testing.T, s Suite) {
	sim, db := s.Open(t, Config{DBMSLock: true, ClockOffset: clockAhead}, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	caps, err := db.Kit().Probe(ctx, dialects.ProbeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for what, c := range map[string]dialects.Capability{
		"session locks": caps.SessionLocks, "SKIP LOCKED": caps.SkipLocked, "NOWAIT": caps.NoWait,
		"lock listing": caps.LockListing, "kill": caps.KillSessions, "isolation": caps.Isolation,
	} {
		if !c.Supported {
			t.Errorf("%s: %+v; want supported", what, c)
		}
	}
	for what, c := range map[string]dialects.Capability{"session locks": caps.SessionLocks, "SKIP LOCKED": caps.SkipLocked, "NOWAIT": caps.NoWait, "lock listing": caps.LockListing} {
		if !strings.HasPrefix(c.Detail, "proved:") {
			t.Errorf("%s was not proved: %q", what, c.Detail)
		}
	}
	// The refusal is quoted on one line, without the stack trace Dameng's
	// driver appends.
	if refusal := "(" + oralike.OneLine(sim.D.RowLocked) + ")"; !strings.Contains(caps.NoWait.Detail, refusal) || strings.Contains(caps.NoWait.Detail, "stack info") {
		t.Errorf("NOWAIT detail %q does not show the server's refusal %s", caps.NoWait.Detail, refusal)
	}
	if caps.Isolation.Detail != "read committed" {
		t.Errorf("isolation %q; want read committed", caps.Isolation.Detail)
	}
	r := caps.Recommended
	if r.LockStrategy != dialects.StrategySession || r.ClaimStrategy != dialects.ClaimSkipLocked || !strings.Contains(r.ClaimReason, "ROWNUM") {
		t.Errorf("recommended %+v; want session locks and skip-locked claims warning about ROWNUM", r)
	}
	if skew := caps.Clock.Skew; !caps.Clock.Measured || caps.Clock.Server.IsZero() || skew < clockAhead-100*time.Millisecond || skew > clockAhead+100*time.Millisecond {
		t.Errorf("clock %+v; want measured, %s ahead", caps.Clock, clockAhead)
	}
	if len(caps.MissingPrivileges) != 0 {
		t.Errorf("missing privileges %+v; want none", caps.MissingPrivileges)
	}
	if left := sim.ProbeTables(); len(left) != 0 {
		t.Errorf("the probe left tables behind: %v", left)
	}
	if n := sim.HeldLocks(); n != 0 {
		t.Errorf("the probe left %d DBMS_LOCK locks held", n)
	}
	sim.AssertUnderstood(t)
}
