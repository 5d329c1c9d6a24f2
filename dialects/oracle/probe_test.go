package oracle

import (
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

// TestProbeWithoutGrants: a user with none of the optional grants gets
// "no" for each capability with the GRANT that fixes it, the table
// strategy, and no probe table.
func TestProbeWithoutGrants(t *testing.T) {
	cfg := config19c()
	cfg.User = "JOB_RUNNER"
	cfg.NoDBMSLock, cfg.NoViews, cfg.NoAlterSystem, cfg.NoCreateTable = true, true, true, true
	sim, db := openSim(t, cfg)
	caps, err := db.Probe(testCtx(t), dialects.ProbeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		c      dialects.Capability
		remedy string
	}{
		"session locks": {caps.SessionLocks, "GRANT EXECUTE ON SYS.DBMS_LOCK TO JOB_RUNNER"},
		"lock listing":  {caps.LockListing, "GRANT SELECT ON SYS.GV_$LOCK TO JOB_RUNNER"},
		"kill":          {caps.KillSessions, "GRANT ALTER SYSTEM TO JOB_RUNNER"},
	}
	for what, w := range want {
		if w.c.Status != dialects.StatusNo || !strings.Contains(w.c.Remedy, w.remedy) {
			t.Errorf("%s: %+v; want no, with remedy %q", what, w.c, w.remedy)
		}
	}
	grants := map[string]string{}
	for _, p := range caps.MissingPrivileges {
		grants[p.Privilege] = p.Grant
	}
	for priv, grant := range map[string]string{
		"EXECUTE ON SYS.DBMS_LOCK": "GRANT EXECUTE ON SYS.DBMS_LOCK TO JOB_RUNNER",
		"ALTER SYSTEM":             "GRANT ALTER SYSTEM TO JOB_RUNNER",
		"CREATE TABLE":             "GRANT CREATE TABLE TO JOB_RUNNER (and a quota on its default tablespace)",
		"SELECT ON SYS.GV_$LOCK, SYS.GV_$SESSION and SYS.DBMS_LOCK_ALLOCATED": "GRANT SELECT ON SYS.GV_$LOCK TO JOB_RUNNER; GRANT SELECT ON SYS.GV_$SESSION TO JOB_RUNNER; GRANT SELECT ON SYS.DBMS_LOCK_ALLOCATED TO JOB_RUNNER",
	} {
		if grants[priv] != grant {
			t.Errorf("missing %s: grant %q, want %q (all: %+v)", priv, grants[priv], grant, caps.MissingPrivileges)
		}
	}
	if !strings.Contains(caps.SkipLocked.Detail, "not probed: cannot create the probe table") || !strings.HasPrefix(caps.SkipLocked.Detail, "by version:") {
		t.Errorf("SKIP LOCKED without CREATE TABLE: %+v; want the version's answer, not probed", caps.SkipLocked)
	}
	if caps.Recommended.LockStrategy != dialects.StrategyTable {
		t.Errorf("recommended %+v; want the table strategy", caps.Recommended)
	}
	if left := sim.ProbeTables(); len(left) != 0 {
		t.Errorf("probe tables exist: %v", left)
	}
	sim.AssertUnderstood(t)
}

// TestProbeReadOnly creates nothing and answers SKIP LOCKED and NOWAIT by
// version.
func TestProbeReadOnly(t *testing.T) {
	cfg := config19c()
	cfg.Tables = presetTables()
	sim := newSim(t, cfg)
	sqlDB, log := sim.Open(t)
	db, err := New(testCtx(t), sqlDB, nil)
	if err != nil {
		t.Fatal(err)
	}
	caps, err := db.Probe(testCtx(t), dialects.ProbeOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if !caps.SkipLocked.Supported || !strings.Contains(caps.SkipLocked.Detail, dialects.NotProbedReadOnly) || !strings.HasPrefix(caps.NoWait.Detail, "by version:") {
		t.Errorf("read-only: SKIP LOCKED %+v, NOWAIT %+v", caps.SkipLocked, caps.NoWait)
	}
	for _, q := range log.Statements() {
		if strings.HasPrefix(q, "CREATE TABLE") || strings.Contains(q, "FOR UPDATE") {
			t.Errorf("a read-only probe sent %q", q)
		}
	}
}

// TestProbeSkipLockedRejected: a server whose parser rejects SKIP LOCKED
// (ORA-00933) gets "no, not supported" and the optimistic claim, while
// NOWAIT is still proved and the probe table dropped.
func TestProbeSkipLockedRejected(t *testing.T) {
	cfg := config19c()
	cfg.NoSkipLocked = true
	sim, db := openSim(t, cfg)
	caps, err := db.Probe(testCtx(t), dialects.ProbeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if caps.SkipLocked.Status != dialects.StatusNo || !strings.Contains(caps.SkipLocked.Detail, "ORA-00933") {
		t.Errorf("SKIP LOCKED: %+v; want no, showing ORA-00933", caps.SkipLocked)
	}
	if !caps.NoWait.Supported || caps.Recommended.ClaimStrategy != dialects.ClaimOptimistic {
		t.Errorf("NOWAIT %+v, claim %s; want NOWAIT proved and optimistic claims", caps.NoWait, caps.Recommended.ClaimStrategy)
	}
	if left := sim.ProbeTables(); len(left) != 0 {
		t.Errorf("the probe left tables behind: %v", left)
	}
}

func TestRowLockFacts(t *testing.T) {
	for _, tt := range []struct {
		version string
		status  dialects.CapabilityStatus
	}{
		{"10.2.0.5.0", dialects.StatusNo},
		{"11.1.0.6.0", dialects.StatusYes},
		{"23.26.0.0.0", dialects.StatusYes},
		{"", dialects.StatusUnknown},
	} {
		skip, nowait := rowLockFacts(dialects.Info{Version: tt.version})
		if skip.Status != tt.status || !nowait.Supported {
			t.Errorf("Oracle %q: SKIP LOCKED %+v, NOWAIT %+v; want %s and yes", tt.version, skip, nowait, tt.status)
		}
	}
}
