package oracle

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func pin(t *testing.T, db *sql.DB) *sql.Conn {
	t.Helper()
	c, err := db.Conn(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestSessionOpsSimulated drives TryLock, Holds, Unlock and Holder on two
// sessions and checks each statement's answer.
func TestSessionOpsSimulated(t *testing.T) {
	sim := newSim(t, config19c())
	db, log := sim.open(t)
	ctx := testCtx(t)
	ops := &SessionOps{}
	a, b := pin(t, db), pin(t, db)
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
	holder, err := ops.Holder(ctx, db, "job")
	if err != nil || !regexpSessionID.MatchString(holder) {
		t.Fatalf("Holder = %q, %v; want sid,serial#,@inst", holder, err)
	}
	got, err = ops.Unlock(ctx, a, "job")
	step("A releases (RELEASE 0)", got, err, true)
	got, err = ops.Holds(ctx, a, "job")
	step("after release A holds nothing", got, err, false)
	got, err = ops.TryLock(ctx, b, "job")
	step("B takes it after the Holds probe gave back what it took", got, err, true)
	if holder, err := ops.Holder(ctx, db, "nobody-holds-this"); err != nil || holder != "" {
		t.Errorf("Holder of a free lock = %q, %v; want empty", holder, err)
	}
	for _, q := range log.Statements() {
		if strings.Contains(q, "DBMS_LOCK.REQUEST") && !strings.Contains(q, "release_on_commit => FALSE") {
			t.Errorf("a REQUEST without release_on_commit => FALSE: %s", q)
		}
	}
	sim.AssertUnderstood(t)
}

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
	if holder, err := dialects.LookupHolder(ctx, l, "nightly"); err != nil || !regexpSessionID.MatchString(holder) {
		t.Errorf("LookupHolder = %q, %v; want the session id", holder, err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if n := sim.HeldLocks(); n != 0 {
		t.Errorf("%d locks held after release", n)
	}
}

// TestMissingGrantAtFirstUse: when detection could not tell (no probe
// recorded), the first DBMS_LOCK block reports the missing grant as a
// *dialects.PrivilegeError with the GRANT, not as a raw ORA-06550.
func TestMissingGrantAtFirstUse(t *testing.T) {
	cfg := config19c()
	cfg.NoDBMSLock = true
	cfg.User = "batch user"
	sim := newSim(t, cfg)
	db, _ := sim.open(t)
	l, err := NewSessionLocker(db, ParseVersion(Versions{Version: "19.0.0.0.0"}))
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
