package sqlserver

import (
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

func TestProbeOnSimulator(t *testing.T) {
	sim := newSim()
	caps, err := sim.detected(t).Probe(t.Context(), dialects.ProbeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for what, c := range map[string]dialects.Capability{
		"session locks": caps.SessionLocks, "READPAST": caps.SkipLocked, "NOWAIT": caps.NoWait,
		"lock listing": caps.LockListing, "kill": caps.KillSessions, "isolation": caps.Isolation,
	} {
		if !c.Supported {
			t.Errorf("%s: %+v; want supported", what, c)
		}
	}
	if !strings.HasPrefix(caps.SkipLocked.Detail, "proved:") || !strings.HasPrefix(caps.NoWait.Detail, "proved:") {
		t.Errorf("row locks were not proved: %q, %q", caps.SkipLocked.Detail, caps.NoWait.Detail)
	}
	if caps.Recommended.LockStrategy != dialects.StrategySession || caps.Recommended.ClaimStrategy != dialects.ClaimReadPast {
		t.Errorf("recommended %+v; want session and readpast", caps.Recommended)
	}
	if !caps.Clock.Measured || len(caps.MissingPrivileges) != 0 {
		t.Errorf("clock %+v, missing %+v", caps.Clock, caps.MissingPrivileges)
	}
	if len(sim.probes) != 0 {
		t.Errorf("the probe left tables behind: %v", sim.probes)
	}
}

// TestProbeUnderRCSI proves the READPAST probe carries READCOMMITTEDLOCK
// when the database has READ_COMMITTED_SNAPSHOT ON (without it the
// simulated server refuses READPAST, as the reference says SQL Server
// does), and that the claim advice says so.
func TestProbeUnderRCSI(t *testing.T) {
	sim := newSim()
	sim.rcsi = true
	caps, err := sim.detected(t).Probe(t.Context(), dialects.ProbeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !caps.SkipLocked.Supported || !strings.Contains(caps.Recommended.ClaimReason, "READCOMMITTEDLOCK") || !strings.Contains(caps.Isolation.Detail, "READ_COMMITTED_SNAPSHOT") {
		t.Errorf("under RCSI: READPAST %+v, claim %q, isolation %q", caps.SkipLocked, caps.Recommended.ClaimReason, caps.Isolation.Detail)
	}
}

func TestProbeMissingPrivileges(t *testing.T) {
	sim := newSim()
	sim.noViewState, sim.noKill, sim.noCreateTable = true, true, true
	caps, err := sim.detected(t).Probe(t.Context(), dialects.ProbeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if caps.LockListing.Status != dialects.StatusNo || caps.KillSessions.Status != dialects.StatusNo {
		t.Errorf("listing %+v, kill %+v; want no", caps.LockListing, caps.KillSessions)
	}
	grants := map[string]string{}
	for _, p := range caps.MissingPrivileges {
		grants[p.Privilege] = p.Grant
	}
	want := map[string]string{
		"VIEW SERVER STATE":    "USE master; GRANT VIEW SERVER STATE TO [app_login]",
		"ALTER ANY CONNECTION": "USE master; GRANT ALTER ANY CONNECTION TO [app_login]",
		"CREATE TABLE":         "GRANT CREATE TABLE TO [app_user]; GRANT ALTER ON SCHEMA::[dbo] TO [app_user]",
	}
	for p, g := range want {
		if grants[p] != g {
			t.Errorf("missing %s: grant %q, want %q (all: %+v)", p, grants[p], g, caps.MissingPrivileges)
		}
	}
	if !strings.Contains(caps.SkipLocked.Detail, "not probed") {
		t.Errorf("READPAST was probed without CREATE TABLE: %+v", caps.SkipLocked)
	}
}
