package dameng

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
	"github.com/schedlock/schedlock/dialects/internal/oralike/oraliketest"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// Shared test helpers (package oraliketest).
var (
	testCtx = oraliketest.Ctx
	pin     = oraliketest.Pin
)

// TestSessionLockerRefusedWithoutDBMSLock: on a server where DBMS_LOCK is
// not installed (DM8's default), the session strategy is refused with the
// call that installs it and the table strategy, never handed out; the
// probe, the recommendation and the conformance suite all follow.
func TestSessionLockerRefusedWithoutDBMSLock(t *testing.T) {
	sim, db := openSim(t, configDM8())
	_, err := db.SessionLocker()
	if !errors.Is(err, dialects.ErrUnsupported) {
		t.Fatalf("SessionLocker without DBMS_LOCK: %v; want ErrUnsupported", err)
	}
	for _, want := range []string{"SP_CREATE_SYSTEM_PACKAGES(1, 'DBMS_LOCK')", "use " + string(dialects.TermStrategyTable)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not name %q: %v", want, err)
		}
	}
	if strings.Contains(err.Error(), "--") {
		t.Errorf("the refusal names a flag: %v", err)
	}
	if fix, ok := dialects.RemedyOf(err); !ok || fix != dialects.UseTableStrategy {
		t.Errorf("the refusal carries remedy %+v, want the table strategy", fix)
	}
	if got, _ := db.Recommend(); got != dialects.StrategyTable {
		t.Errorf("Recommend = %s, want table", got)
	}
	if db.HasSessionLocks() {
		t.Error("HasSessionLocks is true without DBMS_LOCK")
	}
	caps, err := db.Probe(testCtx(t), dialects.ProbeOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if caps.SessionLocks.Status != dialects.StatusNo || !strings.Contains(caps.SessionLocks.Detail, "SP_CREATE_SYSTEM_PACKAGES") {
		t.Errorf("probe: session locks %+v; want no, naming the install call", caps.SessionLocks)
	}
	if caps.Recommended.LockStrategy != dialects.StrategyTable {
		t.Errorf("probe recommends %s", caps.Recommended.LockStrategy)
	}
	// With no strategy named, the suite runs only what the database
	// supports: the session checks are not listed, so none can pass by
	// accident.
	dialecttest.Run(t, db, dialecttest.Options{Tables: []dialects.Table{{Preset: dialects.PresetShedlock}}})
	sim.AssertUnderstood(t)
}

// TestSessionLockerRefusedWhenUnproven: when the catalog cannot be read,
// DBMS_LOCK's presence is unknown, and unknown is refused as well.
func TestSessionLockerRefusedWhenUnproven(t *testing.T) {
	cfg := configWithDBMSLock()
	cfg.NoCatalog = true
	_, db := openSim(t, cfg)
	_, err := db.SessionLocker()
	if !errors.Is(err, dialects.ErrUnsupported) || !strings.Contains(err.Error(), "could not be checked") {
		t.Fatalf("SessionLocker with an unreadable catalog: %v; want ErrUnsupported saying the check failed", err)
	}
}

// TestNewSessionLockerProbesUndetectedDB: a locker made for a pool New
// never opened probes for DBMS_LOCK itself, within the caller's context
// (NewSessionLockerContext), and is refused without it.
func TestNewSessionLockerProbesUndetectedDB(t *testing.T) {
	for _, tt := range []struct {
		cfg  simConfig
		want bool
	}{{configDM8(), false}, {configWithDBMSLock(), true}} {
		sim := newSim(t, tt.cfg)
		db, log := sim.Open(t)
		l, err := NewSessionLockerContext(testCtx(t), db)
		if got := err == nil && l != nil; got != tt.want {
			t.Errorf("DBMSLock %v: NewSessionLockerContext = %v, %v", tt.cfg.DBMSLock, l, err)
		}
		if !tt.want && (!errors.Is(err, dialects.ErrUnsupported) || !strings.Contains(err.Error(), "SP_CREATE_SYSTEM_PACKAGES")) {
			t.Errorf("NewSessionLockerContext without DBMS_LOCK: %v; want the refusal naming the install call", err)
		}
		if n := len(log.Statements()); n != 1 {
			t.Errorf("NewSessionLockerContext sent %d statements, want the one probe", n)
		}
	}
}

// TestListAndAdminSimulated lists a held lock with its holder, labels it,
// finds it by name, and kills its session.
func TestListAndAdminSimulated(t *testing.T) {
	sim, db := openSim(t, configWithDBMSLock())
	ctx := testCtx(t)
	l, err := db.SessionLocker()
	if err != nil {
		t.Fatal(err)
	}
	l.(*sqlkit.SessionLocker).CheckEvery = 50 * time.Millisecond
	lease, err := l.Acquire(ctx, "nightly-report", dialects.Options{})
	if err != nil {
		t.Fatal(err)
	}
	locks, err := ListSessionLocks(ctx, db.SQL)
	if err != nil || len(locks) != 1 {
		t.Fatalf("ListSessionLocks = %+v, %v; want the one lock", locks, err)
	}
	got := locks[0]
	if got.Name != "nightly-report" || got.LockName != LockName("nightly-report") || !got.Granted || got.SessionID == "" || got.DBNow.IsZero() {
		t.Errorf("listed %+v", got)
	}
	admin := db.LockAdmin()
	entries, err := admin.SessionLocks(ctx, nil)
	if err != nil || len(entries) != 1 || entries[0].Name != "nightly-report" || entries[0].State != dialects.StateHeld ||
		entries[0].Holder == nil || entries[0].Holder.SessionID != got.SessionID || entries[0].Holder.User != "APP" {
		t.Fatalf("SessionLocks = %+v, %v", entries, err)
	}
	entry, found, err := admin.SessionLock(ctx, "nightly-report")
	if err != nil || !found || entry.Holder.SessionID != got.SessionID {
		t.Fatalf("SessionLock = %+v, %v, %v", entry, found, err)
	}
	if _, found, err := admin.SessionLock(ctx, "other"); err != nil || found {
		t.Fatalf("SessionLock of a free lock = %v, %v", found, err)
	}
	if err := admin.Kill(ctx, got.SessionID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lease.Done():
	case <-time.After(2 * time.Second):
		t.Fatal("the killed session's lease did not end")
	}
	if !errors.Is(lease.Err(), dialects.ErrLeaseLost) {
		t.Errorf("killed lease Err = %v", lease.Err())
	}
	if n := sim.HeldLocks(); n != 0 {
		t.Errorf("%d locks held after the kill", n)
	}
	sim.AssertUnderstood(t)
}

func TestKillRefusals(t *testing.T) {
	cfg := configWithDBMSLock()
	cfg.NoKillPrivilege = true
	sim := newSim(t, cfg)
	db, log := sim.Open(t)
	ctx := testCtx(t)
	ops := &SessionOps{}
	for _, bad := range []string{"", "0", "-5", "12; DROP TABLE x", "1,2", "abc"} {
		if err := ops.kill(ctx, db, bad); !errors.Is(err, dialects.ErrInvalid) {
			t.Errorf("Kill(%q) = %v; want ErrInvalid", bad, err)
		}
	}
	if n := len(log.Statements()); n != 0 {
		t.Errorf("invalid ids sent %d statements", n)
	}
	err := ops.kill(ctx, db, "140737000004096")
	var priv *dialects.PrivilegeError
	if !errors.As(err, &priv) || !strings.Contains(priv.Grant, "GRANT DBA") {
		t.Errorf("Kill without rights = %v; want a *dialects.PrivilegeError", err)
	}
}
