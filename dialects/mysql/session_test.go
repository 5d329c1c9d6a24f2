package mysql

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// TestSessionPoolTrap: a lock taken on connection A cannot be released from
// connection B of the same pool; B's RELEASE_LOCK answers 0 and A keeps it.
func TestSessionPoolTrap(t *testing.T) {
	d := openDetected(t)
	ctx := testContext(t)
	ops := &SessionOps{Info: d.Info, Database: d.Database}
	a, b := conn(t, d.SQL), conn(t, d.SQL)
	name := uniqueName("pooltrap-")

	if got, err := ops.TryLock(ctx, a, name); err != nil || !got {
		t.Fatalf("A GET_LOCK = %v, %v", got, err)
	}
	if got, err := ops.TryLock(ctx, b, name); err != nil || got {
		t.Fatalf("B GET_LOCK while A holds = %v, %v; want false", got, err)
	}
	var raw sql.NullInt64
	if err := b.QueryRowContext(ctx, "SELECT RELEASE_LOCK(?)", ops.LockKey(name)).Scan(&raw); err != nil || !raw.Valid || raw.Int64 != 0 {
		t.Fatalf("B RELEASE_LOCK = %v, %v; want 0 (held by another session)", raw, err)
	}
	if got, err := ops.Unlock(ctx, b, name); err != nil || got {
		t.Fatalf("B Unlock = %v, %v; want false", got, err)
	}
	if got, err := ops.Holds(ctx, a, name); err != nil || !got {
		t.Fatalf("A Holds after B's release = %v, %v; want true", got, err)
	}
	if got, err := ops.Holds(ctx, b, name); err != nil || got {
		t.Fatalf("B Holds = %v, %v; want false", got, err)
	}
	holder, err := holderOf(ctx, d, name)
	if err != nil || holder != connectionID(t, a) {
		t.Fatalf("Holder = %q, %v; want A's connection id %s", holder, err, connectionID(t, a))
	}
	if got, err := ops.Unlock(ctx, a, name); err != nil || !got {
		t.Fatalf("A Unlock = %v, %v; want true", got, err)
	}
	if holder, err := holderOf(ctx, d, name); err != nil || holder != "" {
		t.Fatalf("Holder after release = %q, %v; want empty", holder, err)
	}
	// RELEASE_LOCK of a lock nobody holds answers NULL: false, no error.
	if got, err := ops.Unlock(ctx, a, name); err != nil || got {
		t.Fatalf("Unlock of a free lock = %v, %v; want false", got, err)
	}
	if got, err := ops.Holds(ctx, a, name); err != nil || got {
		t.Fatalf("Holds of a free lock = %v, %v; want false", got, err)
	}
}

// TestSessionLockerLive runs the shared SessionLocker over these ops: a
// second acquire names the holder's connection, release frees the lock.
func TestSessionLockerLive(t *testing.T) {
	d := openDetected(t)
	ctx := testContext(t)
	l, err := d.SessionLocker()
	if err != nil {
		t.Fatal(err)
	}
	name := uniqueName("session-")
	lease, err := l.Acquire(ctx, name, dialects.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := lease.Token(); ok {
		t.Error("a GET_LOCK lease reports a fencing token")
	}
	// A refusal is one round trip; the holder is looked up on request.
	_, err = l.Acquire(ctx, name, dialects.Options{})
	var held *dialects.HeldError
	if !errors.As(err, &held) || held.Holder != "" {
		t.Fatalf("second Acquire = %v; want a HeldError naming no holder", err)
	}
	if holder, err := holderOf(ctx, d, name); err != nil || holder == "" {
		t.Errorf("the LockAdmin finds holder %q, %v; want the session", holder, err)
	}
	start := time.Now()
	_, err = l.Acquire(ctx, name, dialects.Options{Wait: 300 * time.Millisecond, RetryEvery: 50 * time.Millisecond})
	if !errors.Is(err, dialects.ErrHeld) || time.Since(start) > 2*time.Second {
		t.Errorf("waiting Acquire = %v after %s; want ErrHeld within the wait", err, time.Since(start))
	}
	if err := lease.Refresh(ctx); err != nil {
		t.Errorf("Refresh: %v", err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := lease.Release(ctx); !errors.Is(err, dialects.ErrLeaseLost) {
		t.Errorf("second Release = %v; want ErrLeaseLost", err)
	}
	again, err := l.Acquire(ctx, name, dialects.Options{})
	if err != nil {
		t.Fatalf("Acquire after release: %v", err)
	}
	_ = again.Release(ctx)
}

// TestKillFreesLock: KILL of the holder's connection frees the lock, and
// the lease notices through Done and Err within a few seconds.
func TestKillFreesLock(t *testing.T) {
	d := openDetected(t)
	ctx := testContext(t)
	ops := &SessionOps{Info: d.Info, Database: d.Database}
	l := &sqlkit.SessionLocker{Dialect: Name, DB: d.SQL, Ops: ops, CheckEvery: 200 * time.Millisecond}
	name := uniqueName("kill-")
	lease, err := l.Acquire(ctx, name, dialects.Options{})
	if err != nil {
		t.Fatal(err)
	}
	holder, err := holderOf(ctx, d, name)
	if err != nil || holder == "" {
		t.Fatalf("Holder = %q, %v", holder, err)
	}
	if err := d.LockAdmin().Kill(ctx, holder); err != nil {
		t.Fatalf("Kill(%s): %v", holder, err)
	}
	select {
	case <-lease.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("lease still not done 5 s after its connection was killed")
	}
	if err := lease.Err(); !errors.Is(err, dialects.ErrLeaseLost) {
		t.Errorf("Err after kill = %v; want ErrLeaseLost", err)
	}
	if err := lease.Release(ctx); !errors.Is(err, dialects.ErrLeaseLost) {
		t.Errorf("Release after kill = %v; want ErrLeaseLost", err)
	}
	// The lease may learn of the kill (its socket closed) a moment before
	// the server has freed the lock: the safe order.
	next, err := l.Acquire(ctx, name, dialects.Options{Wait: 5 * time.Second})
	if err != nil {
		t.Fatalf("Acquire after kill: %v", err)
	}
	_ = next.Release(ctx)
}

func TestKillRejectsBadIDs(t *testing.T) {
	ops := &SessionOps{}
	for _, id := range []string{"", "0", "-1", "12; DROP TABLE x", "1e3", "abc"} {
		if err := ops.kill(context.Background(), nil, id); !errors.Is(err, dialects.ErrInvalid) {
			t.Errorf("Kill(%q) = %v; want ErrInvalid", id, err)
		}
	}
}

func TestKillUnknownSessionLive(t *testing.T) {
	d := openDetected(t)
	err := d.LockAdmin().Kill(testContext(t), "4000000000")
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != errNoSuchThread {
		t.Errorf("Kill of an unknown session = %v; want server error %d", err, errNoSuchThread)
	}
}

// TestKillWithoutPrivilegeLive connects as a fresh user without the kill
// privilege and tries to kill another user's session.
func TestKillWithoutPrivilegeLive(t *testing.T) {
	d := openDetected(t)
	ctx := testContext(t)
	user := uniqueName("sl_")
	password := uniqueName("pw")
	host := "%"
	if _, err := d.SQL.ExecContext(ctx, "CREATE USER '"+user+"'@'"+host+"' IDENTIFIED BY '"+password+"'"); err != nil {
		t.Fatalf("create a test user: %v", err)
	}
	t.Cleanup(func() { _, _ = d.SQL.ExecContext(context.Background(), "DROP USER '"+user+"'@'"+host+"'") })

	weak := openLive(t, func(c *mysql.Config) { c.User, c.Passwd, c.DBName = user, password, "" })
	victim := conn(t, d.SQL)
	err := (&SessionOps{Info: d.Info, Database: d.Database}).kill(ctx, weak, connectionID(t, victim))
	var pe *dialects.PrivilegeError
	if !errors.As(err, &pe) || !errors.Is(err, dialects.ErrPrivilege) {
		t.Fatalf("Kill without privilege = %v; want a PrivilegeError", err)
	}
	wantPriv := "SUPER"
	switch {
	case d.Info.Product == dialects.ProductMariaDB && versionAtLeast(d.Info.Version, 10, 5, 2):
		wantPriv = "CONNECTION ADMIN"
	case d.Info.Product == dialects.ProductMySQL && versionAtLeast(d.Info.Version, 8):
		wantPriv = "CONNECTION_ADMIN"
	}
	if pe.Privilege != wantPriv || !strings.Contains(pe.Grant, "GRANT "+wantPriv+" ON *.* TO '"+user+"'@") {
		t.Errorf("PrivilegeError = %q / %q; want %s granted to %s", pe.Privilege, pe.Grant, wantPriv, user)
	}
	// The GRANT it names really is the fix.
	if _, err := d.SQL.ExecContext(ctx, pe.Grant); err != nil {
		t.Fatalf("run %q: %v", pe.Grant, err)
	}
	strong := openLive(t, func(c *mysql.Config) { c.User, c.Passwd, c.DBName = user, password, "" })
	if err := (&SessionOps{Info: d.Info, Database: d.Database}).kill(ctx, strong, connectionID(t, victim)); err != nil {
		t.Errorf("Kill after %q: %v", pe.Grant, err)
	}
}

// holderOf is the id of the session holding the session lock name, as
// d's LockAdmin finds it (unlock's and locks ls's lookup); "" when free.
func holderOf(ctx context.Context, d *Backend, name string) (string, error) {
	e, found, err := d.LockAdmin().SessionLock(ctx, name)
	if err != nil || !found || e.Holder == nil {
		return "", err
	}
	return e.Holder.SessionID, nil
}
