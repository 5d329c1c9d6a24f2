package dameng

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/oralike"
)

// probeSim detects a simulated server with cfg and probes it.
func probeSim(t *testing.T, cfg simConfig, opts dialects.ProbeOptions) (*dmSim, dialects.Capabilities, []string) {
	t.Helper()
	if cfg.Tables == nil {
		cfg.Tables = presetTables()
	}
	sim := newSim(t, cfg)
	sqlDB, log := sim.Open(t)
	db, err := New(testCtx(t), sqlDB, nil)
	if err != nil {
		t.Fatal(err)
	}
	caps, err := db.Probe(testCtx(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	if left := sim.ProbeTables(); len(left) != 0 {
		t.Errorf("the probe left tables behind: %v", left)
	}
	if n := sim.HeldLocks(); n != 0 {
		t.Errorf("the probe left %d DBMS_LOCK locks held", n)
	}
	sim.AssertUnderstood(t)
	return sim, caps, log.Statements()
}

// TestProbeWithoutDBMSLock: on DM8 as it ships, session locks are "no"
// with the call that installs DBMS_LOCK, listing is "no" for want of locks
// to list, no DBMS_LOCK statement is sent (the simulator records one as
// not understood), and the table strategy is recommended.
func TestProbeWithoutDBMSLock(t *testing.T) {
	_, caps, _ := probeSim(t, configDM8(), dialects.ProbeOptions{})
	for what, c := range map[string]dialects.Capability{"session locks": caps.SessionLocks, "lock listing": caps.LockListing} {
		if c.Status != dialects.StatusNo || !strings.Contains(c.Remedy, installDBMSLock) {
			t.Errorf("%s: %+v; want no, with %s", what, c, installDBMSLock)
		}
	}
	if !strings.Contains(caps.SessionLocks.Remedy, "GRANT EXECUTE ON SYS.DBMS_LOCK TO APP") {
		t.Errorf("session locks remedy %q does not name the grant for APP", caps.SessionLocks.Remedy)
	}
	if !strings.Contains(caps.LockListing.Detail, "V$LOCK and V$SESSIONS are readable") {
		t.Errorf("lock listing %+v; want the views proved readable", caps.LockListing)
	}
	if !caps.SkipLocked.Supported || !caps.NoWait.Supported || !caps.KillSessions.Supported {
		t.Errorf("SKIP LOCKED %+v, NOWAIT %+v, kill %+v; want all supported", caps.SkipLocked, caps.NoWait, caps.KillSessions)
	}
	if caps.Recommended.LockStrategy != dialects.StrategyTable || len(caps.MissingPrivileges) != 0 {
		t.Errorf("recommended %+v, missing %+v; want the table and nothing missing", caps.Recommended, caps.MissingPrivileges)
	}
}

// TestProbeSeesDBMSLockInstalledAfterDetect: a DBA installs DBMS_LOCK
// after detection; the probe finds it, proves the session locks through
// the session locker (which uses the probe's fresher answer) and
// recommends them.
func TestProbeSeesDBMSLockInstalledAfterDetect(t *testing.T) {
	sim, db := openSim(t, configDM8())
	sim.Mu.Lock()
	sim.cfg.DBMSLock = true
	sim.Mu.Unlock()
	caps, err := db.Probe(testCtx(t), dialects.ProbeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !caps.SessionLocks.Supported || !strings.HasPrefix(caps.SessionLocks.Detail, "proved:") {
		t.Errorf("session locks %+v; want proved once DBMS_LOCK is installed", caps.SessionLocks)
	}
	if caps.Recommended.LockStrategy != dialects.StrategySession {
		t.Errorf("recommended %+v; want session locks", caps.Recommended)
	}
	sim.AssertUnderstood(t)
}

// TestProbeWithoutGrants: a user without the DBA role, CREATE TABLE or the
// lock views gets "no" for each with the GRANT that fixes it, SKIP LOCKED
// and NOWAIT answered by version, and no probe table.
func TestProbeWithoutGrants(t *testing.T) {
	cfg := configWithDBMSLock()
	cfg.User = "JOB_RUNNER"
	cfg.NoDBA, cfg.NoCreateTable, cfg.NoLockViews = true, true, true
	_, caps, stmts := probeSim(t, cfg, dialects.ProbeOptions{})
	for what, w := range map[string]struct {
		c      dialects.Capability
		remedy string
	}{
		"lock listing": {caps.LockListing, "GRANT SELECT ON V$LOCK TO JOB_RUNNER"},
		"kill":         {caps.KillSessions, "GRANT DBA TO JOB_RUNNER"},
	} {
		if w.c.Status != dialects.StatusNo || !strings.Contains(w.c.Remedy, w.remedy) {
			t.Errorf("%s: %+v; want no, with remedy %q", what, w.c, w.remedy)
		}
	}
	grants := map[string]string{}
	for _, p := range caps.MissingPrivileges {
		grants[p.Privilege] = p.Grant
	}
	want := map[string]string{
		"DBA":          "GRANT DBA TO JOB_RUNNER",
		"CREATE TABLE": "GRANT CREATE TABLE TO JOB_RUNNER",
		"SELECT ON V$LOCK, V$SESSIONS, SYS.DBMS_LOCK_ALLOCATED": "GRANT SELECT ON V$LOCK TO JOB_RUNNER; GRANT SELECT ON V$SESSIONS TO JOB_RUNNER; GRANT SELECT ON SYS.DBMS_LOCK_ALLOCATED TO JOB_RUNNER",
	}
	if len(grants) != len(want) {
		t.Errorf("missing privileges %+v; want exactly %v", caps.MissingPrivileges, want)
	}
	for priv, grant := range want {
		if grants[priv] != grant {
			t.Errorf("missing %s: grant %q, want %q", priv, grants[priv], grant)
		}
	}
	for what, c := range map[string]dialects.Capability{"SKIP LOCKED": caps.SkipLocked, "NOWAIT": caps.NoWait} {
		if c.Status != dialects.StatusUnknown || !strings.HasPrefix(c.Detail, "by version:") || !strings.Contains(c.Detail, "not probed: cannot create the probe table") {
			t.Errorf("%s without CREATE TABLE: %+v; want unknown by version, not probed", what, c)
		}
	}
	if !caps.SessionLocks.Supported {
		t.Errorf("session locks %+v; want proved: DBMS_LOCK needs none of the missing grants", caps.SessionLocks)
	}
	for _, q := range stmts {
		if strings.HasPrefix(q, "CREATE TABLE") {
			t.Errorf("the probe tried %q without CREATE TABLE", q)
		}
	}
	if caps.Recommended.ClaimStrategy != dialects.ClaimOptimistic {
		t.Errorf("claim %s; want optimistic while SKIP LOCKED is unproved", caps.Recommended.ClaimStrategy)
	}
}

// TestProbeReadOnly creates and locks nothing: SKIP LOCKED and NOWAIT are
// answered by version, while the session locks, which write nothing, are
// still proved.
func TestProbeReadOnly(t *testing.T) {
	_, caps, stmts := probeSim(t, configWithDBMSLock(), dialects.ProbeOptions{ReadOnly: true})
	for what, c := range map[string]dialects.Capability{"SKIP LOCKED": caps.SkipLocked, "NOWAIT": caps.NoWait} {
		if c.Status != dialects.StatusUnknown || !strings.HasPrefix(c.Detail, "by version: DM 8 (build ") || !strings.HasSuffix(c.Detail, dialects.NotProbedReadOnly) {
			t.Errorf("read-only %s: %+v; want unknown by version, not probed", what, c)
		}
	}
	if !caps.SessionLocks.Supported {
		t.Errorf("session locks %+v; want proved in read-only mode too", caps.SessionLocks)
	}
	for _, q := range stmts {
		if strings.HasPrefix(q, "CREATE") || strings.HasPrefix(q, "INSERT") || strings.HasPrefix(q, "DROP") || strings.Contains(q, "FOR UPDATE") {
			t.Errorf("a read-only probe sent %q", q)
		}
	}
}

// TestProbeRowLockAnswers maps the row-lock probe's outcomes: a parser
// that rejects SKIP LOCKED (-2007), and a FOR UPDATE that locks nothing
// (what a holder outside a transaction would meet under autocommit).
func TestProbeRowLockAnswers(t *testing.T) {
	t.Run("SKIP LOCKED rejected", func(t *testing.T) {
		cfg := configDM8()
		cfg.NoSkipLocked = true
		_, caps, _ := probeSim(t, cfg, dialects.ProbeOptions{})
		if caps.SkipLocked.Status != dialects.StatusNo || caps.SkipLocked.Detail != "not supported: Error -2007: 语法分析出错" {
			t.Errorf("SKIP LOCKED: %+v; want no, showing -2007 without the stack trace", caps.SkipLocked)
		}
		if !caps.NoWait.Supported || caps.Recommended.ClaimStrategy != dialects.ClaimOptimistic {
			t.Errorf("NOWAIT %+v, claim %s; want NOWAIT proved and optimistic claims", caps.NoWait, caps.Recommended.ClaimStrategy)
		}
	})
	t.Run("FOR UPDATE takes no lock", func(t *testing.T) {
		cfg := configDM8()
		cfg.ForUpdateNoLock = true
		_, caps, _ := probeSim(t, cfg, dialects.ProbeOptions{})
		for what, c := range map[string]dialects.Capability{"SKIP LOCKED": caps.SkipLocked, "NOWAIT": caps.NoWait} {
			if c.Status != dialects.StatusNo || !strings.Contains(c.Detail, "takes no lock") {
				t.Errorf("%s: %+v; want no: the row was not locked", what, c)
			}
		}
	})
}

// TestProbeUnreadableCatalog: when ALL_OBJECTS and the privilege views
// cannot be read, session locks and kill are "unknown" (never "yes"), no
// privilege is reported missing on a guess, and the row-lock probe still
// runs.
func TestProbeUnreadableCatalog(t *testing.T) {
	cfg := configDM8()
	cfg.NoCatalog, cfg.NoPrivViews = true, true
	_, caps, _ := probeSim(t, cfg, dialects.ProbeOptions{})
	for what, c := range map[string]dialects.Capability{"session locks": caps.SessionLocks, "kill": caps.KillSessions} {
		if c.Status != dialects.StatusUnknown {
			t.Errorf("%s: %+v; want unknown", what, c)
		}
	}
	if !strings.Contains(caps.KillSessions.Detail, "USER_ROLE_PRIVS") || strings.Contains(caps.KillSessions.Detail, "stack info") {
		t.Errorf("kill detail %q; want the failed read, without the stack trace", caps.KillSessions.Detail)
	}
	if len(caps.MissingPrivileges) != 0 || !caps.SkipLocked.Supported {
		t.Errorf("missing %+v, SKIP LOCKED %+v; want nothing missing and SKIP LOCKED proved", caps.MissingPrivileges, caps.SkipLocked)
	}
	if caps.Recommended.LockStrategy != dialects.StrategyTable {
		t.Errorf("recommended %+v; want the table", caps.Recommended)
	}
}

// TestProbeChecksSimulated runs the selfcheck's probe checks: every one
// passes where DBMS_LOCK is installed; without it, session locks are
// skipped (the server lacks them) and listing warns with the call that
// installs the package, while the rest still pass.
func TestProbeChecksSimulated(t *testing.T) {
	ids := []string{"probe.session-locks", "probe.skip-locked", "probe.nowait", "probe.lock-listing", "probe.kill-sessions", "probe.privileges"}
	for _, tc := range []struct {
		name string
		cfg  simConfig
		want map[string]checks.Status
	}{
		{"with DBMS_LOCK", configWithDBMSLock(), map[string]checks.Status{}},
		{"without DBMS_LOCK", configDM8(), map[string]checks.Status{"probe.session-locks": checks.StatusSkip, "probe.lock-listing": checks.StatusWarn}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim, db := openSim(t, tc.cfg)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			rep, err := checks.Run(ctx, checks.Config{Backend: db, Strategies: []dialects.Strategy{dialects.StrategyTable}, Tables: presetTables()[:1], Only: ids})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Results) != len(ids) {
				t.Fatalf("%d results for %d checks", len(rep.Results), len(ids))
			}
			for _, r := range rep.Results {
				want, ok := tc.want[r.ID]
				if !ok {
					want = checks.StatusPass
				}
				if r.Status != want {
					t.Errorf("%s: %s (%s; remedy %q); want %s", r.ID, r.Status, r.Detail, r.Remedy, want)
				}
				if r.Status == checks.StatusSkip && r.Remedy != "" {
					t.Errorf("%s: a skip with a remedy is a missing prerequisite to dialecttest: %q", r.ID, r.Remedy)
				}
				if r.Status == checks.StatusWarn && !strings.Contains(r.Remedy, installDBMSLock) {
					t.Errorf("%s warns without the call that installs DBMS_LOCK: %q", r.ID, r.Remedy)
				}
			}
			sim.AssertUnderstood(t)
		})
	}
}

// TestRowLockErrors maps the driver's errors: by code on the error, by the
// "Error <code>:" of its text, and by the server's words.
func TestRowLockErrors(t *testing.T) {
	wrapped := func(err error) error { return fmt.Errorf("query: %w", err) }
	for _, tc := range []struct {
		err             error
		syntax, refused bool
	}{
		{dmErr(codeSyntax, "语法分析出错"), true, false},
		{wrapped(dmErr(codeSyntax, "x")), true, false},
		{errors.New("Error -2007: 第1 行附近出现错误"), true, false},
		{errors.New("Syntax error near SKIP"), true, false},
		{dmErr(codeLockRefused, "锁超时"), false, true},
		{wrapped(dmErr(codeLockRefused, "x")), false, true},
		{dmErr(-9999, "锁超时"), false, true},
		{errors.New("lock timeout"), false, true},
		{dmErr(codeInvalidTable, "无效的表或视图名[T]"), false, false},
		{dmErr(codeUniqueViolated, "违反表[T]唯一性约束条件"), false, false},
		{nil, false, false},
	} {
		if got := IsSyntaxError(tc.err); got != tc.syntax {
			t.Errorf("IsSyntaxError(%v) = %v", tc.err, got)
		}
		if got := IsLockRefused(tc.err); got != tc.refused {
			t.Errorf("IsLockRefused(%v) = %v", tc.err, got)
		}
	}
}

func TestWithoutStack(t *testing.T) {
	for in, want := range map[string]string{
		"proved: refused in 2ms (Error -6409: 锁超时 stack info: 1). gitee.com/chunanyong/dm.(*DmError).throw)": "proved: refused in 2ms (Error -6409: 锁超时)",
		"not supported: Error -2007: 语法分析出错 stack info: 1). x.(*DmError).throw":                              "not supported: Error -2007: 语法分析出错",
		"proved: a row locked by another connection was skipped":                                             "proved: a row locked by another connection was skipped",
	} {
		if got := withoutStack(dialects.CapYes(in)).Detail; got != want {
			t.Errorf("withoutStack(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLiveProbe probes a live DM8 server: every capability gets a decided
// answer or a reason, the clock is read, and no probe table is left.
func TestLiveProbe(t *testing.T) {
	db := liveDetected(t)
	caps, err := db.Probe(testCtx(t), dialects.ProbeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for what, c := range map[string]dialects.Capability{
		"session locks": caps.SessionLocks, "SKIP LOCKED": caps.SkipLocked, "NOWAIT": caps.NoWait,
		"lock listing": caps.LockListing, "kill": caps.KillSessions,
	} {
		t.Logf("%s: %s: %s (remedy: %s)", what, c.Status, c.Detail, c.Remedy)
		if c.Status == "" || c.Detail == "" {
			t.Errorf("%s: no answer: %+v", what, c)
		}
	}
	if caps.NoWait.Status == dialects.StatusUnknown && !strings.Contains(caps.NoWait.Detail, "not probed") {
		t.Errorf("NOWAIT failed with an error IsLockRefused does not know: %s", caps.NoWait.Detail)
	}
	if !caps.Clock.Measured {
		t.Errorf("clock not measured: %s", caps.Clock.Detail)
	}
	t.Logf("clock skew %s (round trip %s); recommended %s", caps.Clock.Skew, caps.Clock.RoundTrip, caps.Recommended.Reason())
	rows, err := db.SQL.QueryContext(testCtx(t), "SELECT TABLE_NAME FROM USER_TABLES WHERE TABLE_NAME LIKE 'SCHEDLOCK_PROBE_%'")
	if err != nil {
		t.Fatal(oralike.OneLine(err))
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		t.Errorf("probe table left behind: %s", name)
	}
}
