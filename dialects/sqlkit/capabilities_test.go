package sqlkit_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
	"github.com/schedlock/schedlock/internal/fakesql"
)

// lockServer simulates a server's named session locks: "TRY", "UNLOCK" and
// "HOLDS" statements with the name as the only argument. A session's locks
// are freed when its connection closes. With stub set, TRY grants every
// request, like CockroachDB's pg_try_advisory_lock.
type lockServer struct {
	stub    bool
	tryErr  error
	skewBy  time.Duration
	rowLock rowLockScript

	mu      sync.Mutex
	holders map[string]int64 // lock name → session id
	log     []string         // row-lock statements, in order
	tables  map[string]bool  // probe tables that exist
}

// rowLockScript says how the simulated server answers the row-lock probe.
type rowLockScript struct {
	createErr    error
	skipReturns  int   // rows SKIP LOCKED returns
	skipErr      error // error SKIP LOCKED returns
	nowaitErr    error // error NOWAIT returns (nil: it returns the row)
	lockedByHold bool  // whether the holder's row lock is in place
}

var (
	errSyntax  = errors.New("syntax error at or near SKIP")
	errRefused = errors.New("could not obtain lock on row")
)

func newLockServer() *lockServer {
	return &lockServer{holders: map[string]int64{}, tables: map[string]bool{}}
}

func (h *lockServer) Handle(s *fakesql.Session, query string, args []driver.NamedValue) (fakesql.Response, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	one := func(v any) (fakesql.Response, error) {
		return fakesql.Response{Columns: []string{"v"}, Rows: [][]any{{v}}}, nil
	}
	verb, rest, _ := strings.Cut(query, " ")
	switch verb {
	case "TRY", "UNLOCK", "HOLDS":
		name := args[0].Value.(string)
		holder, held := h.holders[name]
		switch verb {
		case "TRY":
			if h.tryErr != nil {
				return fakesql.Response{}, h.tryErr
			}
			if held && holder != s.ID && !h.stub {
				return one(int64(0))
			}
			h.holders[name] = s.ID
			return one(int64(1))
		case "UNLOCK":
			if !held || (holder != s.ID && !h.stub) {
				return one(int64(0))
			}
			delete(h.holders, name)
			return one(int64(1))
		default:
			return one(held && holder == s.ID)
		}
	case "NOW":
		return one(time.Now().Add(h.skewBy).UTC().Format("2006-01-02 15:04:05.000000"))
	case "CREATE":
		if h.rowLock.createErr != nil {
			return fakesql.Response{}, h.rowLock.createErr
		}
		h.tables[rest] = true
	case "DROP":
		delete(h.tables, rest)
	case "LOCK":
		h.rowLock.lockedByHold = true
		return one(int64(1))
	case "ROLLBACK":
		h.rowLock.lockedByHold = false
	case "SKIP":
		if h.rowLock.skipErr != nil {
			return fakesql.Response{}, h.rowLock.skipErr
		}
		rows := make([][]any, h.rowLock.skipReturns)
		for i := range rows {
			rows[i] = []any{int64(1)}
		}
		return fakesql.Response{Columns: []string{"id"}, Rows: rows}, nil
	case "NOWAIT":
		if h.rowLock.nowaitErr != nil {
			return fakesql.Response{}, h.rowLock.nowaitErr
		}
		return one(int64(1))
	}
	h.log = append(h.log, verb)
	return fakesql.Response{}, nil
}

func (h *lockServer) Close(s *fakesql.Session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for name, id := range h.holders {
		if id == s.ID {
			delete(h.holders, name)
		}
	}
}

func (h *lockServer) held() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.holders)
}

// fakeOps is the SessionOps of the simulated server.
type fakeOps struct{}

func (fakeOps) scan(ctx context.Context, conn *sql.Conn, stmt, name string) (bool, error) {
	var v any
	if err := conn.QueryRowContext(ctx, stmt, name).Scan(&v); err != nil {
		return false, err
	}
	switch v := v.(type) {
	case int64:
		return v == 1, nil
	case bool:
		return v, nil
	}
	return false, fmt.Errorf("unexpected %T", v)
}

func (o fakeOps) TryLock(ctx context.Context, c *sql.Conn, name string) (bool, error) {
	return o.scan(ctx, c, "TRY", name)
}

func (o fakeOps) Unlock(ctx context.Context, c *sql.Conn, name string) (bool, error) {
	return o.scan(ctx, c, "UNLOCK", name)
}

func (o fakeOps) Holds(ctx context.Context, c *sql.Conn, name string) (bool, error) {
	return o.scan(ctx, c, "HOLDS", name)
}

func fakeNow(ctx context.Context, conn *sql.Conn) (time.Time, error) {
	var s string
	if err := conn.QueryRowContext(ctx, "NOW").Scan(&s); err != nil {
		return time.Time{}, err
	}
	return sqlkit.ParseServerTime(s)
}

// fakeEngine is the engine of a database over a lockServer: it
// recommends session locks, like PostgreSQL's, and its probe reports
// SKIP LOCKED as skipLocked. fake returns it with session locks and a
// probe; the tests take either away with noSession and noProbe.
type fakeEngine struct {
	db         *sql.DB
	strategy   dialects.Strategy
	reason     string
	skipLocked dialects.Capability
	// probe is the dialect's probe; nil: the plain probe below.
	probe func(ctx context.Context) (dialects.Capabilities, error)
}

func (e *fakeEngine) NewTableLocker(dialects.Table) (dialects.TableLocker, error) {
	return nil, dialects.ErrUnsupported
}

func (e *fakeEngine) RecommendStrategy() (dialects.Strategy, string) { return e.strategy, e.reason }

func (e *fakeEngine) sessionLocker() (dialects.Locker, error) {
	return &sqlkit.SessionLocker{Dialect: "fake", DB: e.db, Ops: fakeOps{}}, nil
}

func (e *fakeEngine) dialectProbe(ctx context.Context) (dialects.Capabilities, error) {
	if e.probe != nil {
		return e.probe(ctx)
	}
	return dialects.Capabilities{
		SkipLocked:   e.skipLocked,
		NoWait:       dialects.CapYes("by version"),
		Isolation:    dialects.CapYes("read committed"),
		LockListing:  dialects.CapYes("views"),
		KillSessions: dialects.CapNo("no", "GRANT it"),
		Clock:        sqlkit.MeasureClock(ctx, e.db, fakeNow),
	}, nil
}

// The engine's three shapes: session locks and a probe, a probe alone,
// session locks alone.
type (
	fullEngine      struct{ *fakeEngine }
	noSessionEngine struct{ *fakeEngine }
	noProbeEngine   struct{ *fakeEngine }
)

func (e fullEngine) NewSessionLocker(dialects.SessionNames) (dialects.Locker, error) {
	return e.sessionLocker()
}

func (e fullEngine) ProbeDialect(ctx context.Context, _ dialects.ProbeOptions) (dialects.Capabilities, error) {
	return e.dialectProbe(ctx)
}

func (e noSessionEngine) ProbeDialect(ctx context.Context, _ dialects.ProbeOptions) (dialects.Capabilities, error) {
	return e.dialectProbe(ctx)
}

func (e noProbeEngine) NewSessionLocker(dialects.SessionNames) (dialects.Locker, error) {
	return e.sessionLocker()
}

// fake is a fakeEngine over h.
func fake(t *testing.T, h *lockServer, skipLocked dialects.Capability) *fakeEngine {
	t.Helper()
	db, _ := fakesql.Open(h)
	t.Cleanup(func() { _ = db.Close() })
	return &fakeEngine{db: db, strategy: dialects.StrategySession, reason: "fake advisory locks are freed at disconnect", skipLocked: skipLocked}
}

// openFake is the kit's DB of e's database, with engine (nil: fullEngine).
func openFake(e *fakeEngine, engine sqlkit.Engine) *sqlkit.DB {
	if engine == nil {
		engine = fullEngine{e}
	}
	return sqlkit.New(e.db, dialects.Info{Dialect: "fake", Product: "fakedb", Version: "1.0"}, nil, engine)
}

func TestProbeRealSessionLocks(t *testing.T) {
	h := newLockServer()
	db := openFake(fake(t, h, dialects.CapYes("proved")), nil)
	caps, err := db.Probe(context.Background(), dialects.ProbeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := caps.SessionLocks; !c.Supported || c.Status != dialects.StatusYes || !strings.HasPrefix(c.Detail, "proved:") {
		t.Errorf("session locks = %+v, want proved yes", c)
	}
	r := caps.Recommended
	if r.LockStrategy != dialects.StrategySession || r.LockReason != "fake advisory locks are freed at disconnect" {
		t.Errorf("lock recommendation = %s (%s), want the dialect's session", r.LockStrategy, r.LockReason)
	}
	if r.ClaimStrategy != dialects.ClaimSkipLocked {
		t.Errorf("claim strategy = %s, want skip-locked where SKIP LOCKED works", r.ClaimStrategy)
	}
	if !strings.Contains(r.Reason(), "lock strategy session") || !strings.Contains(r.Reason(), "claim strategy skip-locked") {
		t.Errorf("reason %q does not name both strategies", r.Reason())
	}
	if caps.MissingPrivileges == nil {
		t.Error("MissingPrivileges is nil, want an empty list")
	}
	if n := h.held(); n != 0 {
		t.Errorf("%d probe locks left held", n)
	}
}

func TestProbeReportsStubAndFallsBackToTable(t *testing.T) {
	h := newLockServer()
	h.stub = true
	db := openFake(fake(t, h, dialects.CapNo("no row locks", "")), nil)
	caps, err := db.Probe(context.Background(), dialects.ProbeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := caps.SessionLocks
	if c.Status != dialects.StatusStub || c.Supported {
		t.Fatalf("session locks = %+v, want a stub", c)
	}
	if !strings.Contains(c.Detail, "both connections got the lock") {
		t.Errorf("stub detail %q does not say both connections got it", c.Detail)
	}
	r := caps.Recommended
	if r.LockStrategy != dialects.StrategyTable {
		t.Errorf("lock strategy = %s on a stub, want table", r.LockStrategy)
	}
	if !strings.Contains(r.LockReason, "stub") {
		t.Errorf("reason %q does not mention the stub", r.LockReason)
	}
	if r.ClaimStrategy != dialects.ClaimOptimistic {
		t.Errorf("claim strategy = %s without SKIP LOCKED, want optimistic", r.ClaimStrategy)
	}
	if n := h.held(); n != 0 {
		t.Errorf("%d probe locks left held", n)
	}
}

func TestProbeSessionLockFunctionFails(t *testing.T) {
	h := newLockServer()
	h.tryErr = errors.New("function pg_try_advisory_lock(bigint) does not exist")
	db := openFake(fake(t, h, dialects.CapYes("proved")), nil)
	caps, err := db.Probe(context.Background(), dialects.ProbeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := caps.SessionLocks; c.Status != dialects.StatusNo || !strings.Contains(c.Detail, "does not exist") {
		t.Errorf("session locks = %+v, want no with the server's error", c)
	}
	if caps.Recommended.LockStrategy != dialects.StrategyTable {
		t.Errorf("lock strategy = %s, want table", caps.Recommended.LockStrategy)
	}
}

func TestProbeWithoutSessionLocker(t *testing.T) {
	h := newLockServer()
	e := fake(t, h, dialects.CapYes("proved"))
	e.strategy, e.reason = dialects.StrategyTable, "no session locks"
	caps, err := openFake(e, noSessionEngine{e}).Probe(context.Background(), dialects.ProbeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := caps.SessionLocks
	if c.Status != dialects.StatusNo || !strings.Contains(c.Detail, "has no session locks") || strings.Contains(c.Detail, "unsupported by this database") {
		t.Errorf("session locks = %+v, want no with the bare reason", c)
	}
	if caps.Recommended.LockStrategy != dialects.StrategyTable || caps.Recommended.LockReason != "no session locks" {
		t.Errorf("recommendation = %+v, want the dialect's table", caps.Recommended)
	}
}

func TestProbeKeepsDialectSessionAnswer(t *testing.T) {
	h := newLockServer()
	e := fake(t, h, dialects.CapYes("proved"))
	e.probe = func(ctx context.Context) (dialects.Capabilities, error) {
		e.probe = nil
		caps, err := e.dialectProbe(ctx)
		caps.SessionLocks = dialects.CapStub("proved by the dialect", "")
		return caps, err
	}
	caps, err := openFake(e, nil).Probe(context.Background(), dialects.ProbeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if caps.SessionLocks.Detail != "proved by the dialect" || caps.Recommended.LockStrategy != dialects.StrategyTable {
		t.Errorf("dialect's session answer replaced or ignored: %+v, %+v", caps.SessionLocks, caps.Recommended)
	}
}

func TestProbeWithoutDialectProbe(t *testing.T) {
	h := newLockServer()
	e := fake(t, h, dialects.Capability{})
	caps, err := openFake(e, noProbeEngine{e}).Probe(context.Background(), dialects.ProbeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if caps.SkipLocked.Status != dialects.StatusUnknown || caps.Clock.Measured {
		t.Errorf("without a dialect probe: skip %+v clock %+v, want unknown and unmeasured", caps.SkipLocked, caps.Clock)
	}
	if caps.SessionLocks.Status != dialects.StatusYes {
		t.Errorf("session locks still probed generically: %+v", caps.SessionLocks)
	}
}

func TestProbeCancelled(t *testing.T) {
	h := newLockServer()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := openFake(fake(t, h, dialects.CapYes("")), nil).Probe(ctx, dialects.ProbeOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestMeasureClockSkew(t *testing.T) {
	for _, skew := range []time.Duration{0, 1500 * time.Millisecond, -3 * time.Second} {
		h := newLockServer()
		h.skewBy = skew
		db, _ := fakesql.Open(h)
		c := sqlkit.MeasureClock(context.Background(), db, fakeNow)
		_ = db.Close()
		if !c.Measured || c.Detail != "" {
			t.Fatalf("clock not measured: %+v", c)
		}
		if d := c.Skew - skew; d < -50*time.Millisecond || d > 50*time.Millisecond {
			t.Errorf("skew %s measured as %s", skew, c.Skew)
		}
		if c.Server.Location() != time.UTC {
			t.Errorf("server time %s is not UTC", c.Server)
		}
	}
}

func TestMeasureClockFailure(t *testing.T) {
	h := newLockServer()
	db, _ := fakesql.Open(h)
	defer db.Close()
	c := sqlkit.MeasureClock(context.Background(), db, func(context.Context, *sql.Conn) (time.Time, error) {
		return time.Time{}, errors.New("no clock")
	})
	if c.Measured || !strings.Contains(c.Detail, "no clock") {
		t.Errorf("failed reading = %+v, want unmeasured with the reason", c)
	}
}

func TestParseServerTime(t *testing.T) {
	for in, want := range map[string]time.Time{
		"2026-11-30 05:20:58.183":    time.Date(2026, 11, 30, 5, 20, 58, 183e6, time.UTC),
		"2026-11-30 05:20:58.183456": time.Date(2026, 11, 30, 5, 20, 58, 183456e3, time.UTC),
		"2026-11-30 05:20:58":        time.Date(2026, 11, 30, 5, 20, 58, 0, time.UTC),
	} {
		got, err := sqlkit.ParseServerTime(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseServerTime(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	if _, err := sqlkit.ParseServerTime("yesterday"); err == nil {
		t.Error("ParseServerTime accepted garbage")
	}
}

// probeStatements is the fake server's row-lock probe: statements start
// with the verb the lockServer dispatches on.
var probeStatements = sqlkit.RowLockProbe{
	Create: "CREATE t", Insert: "INSERT t", Lock: "LOCK t", SkipLocked: "SKIP t", NoWait: "NOWAIT t", Drop: "DROP t",
	NotSupported: func(err error) bool { return errors.Is(err, errSyntax) },
	Refused:      func(err error) bool { return errors.Is(err, errRefused) },
}

func TestProbeRowLocksAnswers(t *testing.T) {
	cases := []struct {
		name             string
		script           rowLockScript
		wantSkip, wantNW dialects.CapabilityStatus
		skipSays, nwSays string
	}{
		{"both work", rowLockScript{nowaitErr: errRefused}, dialects.StatusYes, dialects.StatusYes, "skipped", "refused"},
		{"skip returns the locked row (TiDB)", rowLockScript{skipReturns: 1}, dialects.StatusNo, dialects.StatusNo, "takes no lock", "takes no lock"},
		{"syntax unknown", rowLockScript{skipErr: errSyntax, nowaitErr: errSyntax}, dialects.StatusNo, dialects.StatusNo, "not supported", "not supported"},
		{"nowait odd error", rowLockScript{nowaitErr: errors.New("disk full")}, dialects.StatusYes, dialects.StatusUnknown, "skipped", "disk full"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newLockServer()
			h.rowLock = tc.script
			db, _ := fakesql.Open(h)
			defer db.Close()
			skip, nowait, err := sqlkit.ProbeRowLocks(context.Background(), db, probeStatements)
			if err != nil {
				t.Fatal(err)
			}
			if skip.Status != tc.wantSkip || !strings.Contains(skip.Detail, tc.skipSays) {
				t.Errorf("skip locked = %+v, want %s saying %q", skip, tc.wantSkip, tc.skipSays)
			}
			if nowait.Status != tc.wantNW || !strings.Contains(nowait.Detail, tc.nwSays) {
				t.Errorf("nowait = %+v, want %s saying %q", nowait, tc.wantNW, tc.nwSays)
			}
			assertRowProbeCleanedUp(t, h)
		})
	}
}

func TestProbeRowLocksCreateRefused(t *testing.T) {
	h := newLockServer()
	h.rowLock.createErr = errors.New("permission denied for schema public")
	db, _ := fakesql.Open(h)
	defer db.Close()
	_, _, err := sqlkit.ProbeRowLocks(context.Background(), db, probeStatements)
	if err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("err = %v, want the refusal", err)
	}
	if len(h.tables) != 0 {
		t.Errorf("tables left: %v", h.tables)
	}
}

func assertRowProbeCleanedUp(t *testing.T, h *lockServer) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.tables) != 0 {
		t.Errorf("probe table left behind: %v", h.tables)
	}
	if h.rowLock.lockedByHold {
		t.Error("the holder's transaction was not rolled back")
	}
	// The holder's transaction ends before DROP TABLE, which would wait
	// for its row lock otherwise.
	if got, want := strings.Join(h.log, ","), "CREATE,INSERT,BEGIN,ROLLBACK,DROP"; got != want {
		t.Errorf("statements %s, want %s", got, want)
	}
}

func TestProbeTableNameIsUnique(t *testing.T) {
	a, b := sqlkit.ProbeTableName(), sqlkit.ProbeTableName()
	if a == b || !strings.HasPrefix(a, "schedlock_probe_") {
		t.Errorf("probe table names %q, %q: want distinct schedlock_probe_ names", a, b)
	}
}

func TestProbeSessionOpsNeedsTwoConnections(t *testing.T) {
	h := newLockServer()
	db, _ := fakesql.Open(h)
	defer db.Close()
	db.SetMaxOpenConns(1)
	done := make(chan dialects.Capability)
	go func() { done <- sqlkit.ProbeSessionOps(context.Background(), db, fakeOps{}) }()
	select {
	case c := <-done:
		if c.Status != dialects.StatusUnknown || !strings.Contains(c.Detail, "needs two") {
			t.Errorf("one-connection pool: %+v, want unknown saying it needs two", c)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the probe hung on a one-connection pool")
	}
	if _, _, err := sqlkit.ProbeRowLocks(context.Background(), db, probeStatements); err == nil || !strings.Contains(err.Error(), "needs two") {
		t.Errorf("row-lock probe on a one-connection pool: %v", err)
	}
}
