package oracle

import (
	"errors"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/oralike/oraliketest"
)

// Shared test helpers (package oraliketest).
var (
	testCtx = oraliketest.Ctx
	pin     = oraliketest.Pin
)

// TestSessionLockFreedWithSession: a lock ends with its session, as the
// server frees user locks at disconnect.
func TestSessionLockFreedWithSession(t *testing.T) {
	sim, db := openSim(t, config19c())
	ctx := testCtx(t)
	l, err := db.SessionLocker()
	if err != nil {
		t.Fatal(err)
	}
	lease, err := l.Acquire(ctx, "nightly", dialects.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(ctx, "nightly", dialects.Options{}); !errors.Is(err, dialects.ErrHeld) {
		t.Fatalf("second acquire: %v; want ErrHeld", err)
	}
	// The refusal is one round trip; the holder is looked up on request.
	if e, found, err := db.LockAdmin().SessionLock(ctx, "nightly"); err != nil || !found || e.Holder == nil || !regexpSessionID.MatchString(e.Holder.SessionID) {
		t.Errorf("SessionLock = %+v, %v, %v; want the session id", e, found, err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if n := sim.HeldLocks(); n != 0 {
		t.Errorf("%d locks held after release", n)
	}
}

// TestMissingGrantAtFirstUse: when detection could not tell (the probe
// gave no answer), the first DBMS_LOCK block reports the missing grant as a
// *dialects.PrivilegeError with the GRANT, not as a raw ORA-06550.
func TestMissingGrantAtFirstUse(t *testing.T) {
	cfg := config19c()
	cfg.NoDBMSLock = true
	cfg.User = "batch user"
	sim := newSim(t, cfg)
	db, _ := sim.Open(t)
	l, err := newSessionLocker(db, lockAccess{})
	if err != nil {
		t.Fatalf("without a probe the locker is built: %v", err)
	}
	_, err = l.Acquire(testCtx(t), "job", dialects.Options{})
	var pe *dialects.PrivilegeError
	if !errors.As(err, &pe) || !errors.Is(err, dialects.ErrPrivilege) {
		t.Fatalf("acquire without EXECUTE on DBMS_LOCK: %v; want a *dialects.PrivilegeError", err)
	}
	if pe.Grant != `GRANT EXECUTE ON SYS.DBMS_LOCK TO "batch user"` {
		t.Errorf("Grant = %q", pe.Grant)
	}
	if oraCode(err) != oraPLSQLCompileFailed {
		t.Errorf("the server's ORA-06550 is not kept as the cause: %v", err)
	}
}
