package postgres

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/schedlock/schedlock/dialects"
)

// Terminating the holder frees the lock at once, and the holder's lease
// learns of the loss within a few seconds (it checks every second).
func TestKillFreesLockAndLeaseReportsLoss(t *testing.T) {
	db := liveDB(t)
	ctx := testCtx(t)
	locker, err := backendFor(db, dialects.Info{Product: dialects.ProductPostgreSQL}, nil).NewSessionLocker(dialects.SessionNames{})
	if err != nil {
		t.Fatal(err)
	}
	name := unique("kill-")
	lease, err := locker.Acquire(ctx, name, dialects.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pid, err := holderOf(ctx, db, name)
	if err != nil || pid == "" {
		t.Fatalf("Holder = %q, %v", pid, err)
	}
	if err := killSession(ctx, db, pid); err != nil {
		t.Fatalf("Kill(%s): %v", pid, err)
	}
	if h, err := holderOf(ctx, db, name); err != nil || h != "" {
		t.Errorf("after Kill, Holder = %q, %v; want the lock free", h, err)
	}
	// The lease learns of the loss within milliseconds; until then this
	// process still counts the name as its own, so the second acquire
	// waits for that (a generous bound for a busy machine).
	other, err := locker.Acquire(ctx, name, dialects.Options{Wait: 10 * time.Second})
	if err != nil {
		t.Fatalf("Acquire after Kill: %v", err)
	}
	defer func() { _ = other.Release(ctx) }()

	// The lease checks its connection every second, with a one-second
	// timeout: Done closes within about 2s; the bound is for a busy machine.
	select {
	case <-lease.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the killed lease's Done did not close within 30s")
	}
	if !errors.Is(lease.Err(), dialects.ErrLeaseLost) {
		t.Errorf("Err after kill = %v, want ErrLeaseLost", lease.Err())
	}
	if err := lease.Release(ctx); !errors.Is(err, dialects.ErrLeaseLost) {
		t.Errorf("Release after kill = %v, want ErrLeaseLost", err)
	}
}

func TestKillRejectsNonBackends(t *testing.T) {
	db := liveDB(t)
	ctx := testCtx(t)
	// 2147483647 is above any Linux pid_max, so it is never a backend.
	for _, id := range []string{"", "abc", "0", "-5", "2147483647"} {
		if err := killSession(ctx, db, id); !errors.Is(err, dialects.ErrInvalid) {
			t.Errorf("Kill(%q) = %v, want ErrInvalid", id, err)
		}
	}
}

// Without pg_signal_backend, terminating another role's session gives a
// PrivilegeError with the GRANT that fixes it, and a superuser's session
// needs SUPERUSER; after the GRANT the same Kill works.
func TestKillPrivilegeErrors(t *testing.T) {
	admin := liveDB(t)
	ctx := testCtx(t)
	var canCreateRoles bool
	if err := admin.QueryRowContext(ctx, "SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user").Scan(&canCreateRoles); err != nil {
		t.Fatal(err)
	}
	if !canCreateRoles {
		t.Fatalf("the user in %s needs SUPERUSER or CREATEROLE to create the test roles", dsnEnv)
	}
	killer, killerDB := tempRole(t, admin, "sl_killer_")
	killerIdent := pgx.Identifier{killer}.Sanitize()
	_, victimDB := tempRole(t, admin, "sl_victim_")

	victim := conn(t, victimDB)
	name := unique("priv-")
	mustBool(t, "victim TryLock", true)(SessionOps{}.TryLock(ctx, victim, name))
	victimPID := strconv.FormatInt(backendPID(t, victim), 10)

	err := killSession(ctx, killerDB, victimPID)
	var priv *dialects.PrivilegeError
	if !errors.As(err, &priv) || !errors.Is(err, dialects.ErrPrivilege) {
		t.Fatalf("Kill of another role's session = %v, want a PrivilegeError", err)
	}
	if priv.Privilege != "pg_signal_backend" || priv.Grant != "GRANT pg_signal_backend TO "+killerIdent {
		t.Errorf("PrivilegeError = %q / %q", priv.Privilege, priv.Grant)
	}
	if h, _ := holderOf(ctx, admin, name); h != victimPID {
		t.Errorf("after the refused Kill, Holder = %q, want %s still", h, victimPID)
	}

	superConn := conn(t, admin)
	superPID := strconv.FormatInt(backendPID(t, superConn), 10)
	var isSuper bool
	if err := admin.QueryRowContext(ctx, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user").Scan(&isSuper); err != nil {
		t.Fatal(err)
	}
	if isSuper {
		err = killSession(ctx, killerDB, superPID)
		if !errors.As(err, &priv) || !strings.HasPrefix(priv.Privilege, "SUPERUSER") || priv.Grant != "" {
			t.Errorf("Kill of a superuser's session = %v, want a PrivilegeError for SUPERUSER", err)
		}
	}

	if _, err := admin.ExecContext(ctx, "GRANT pg_signal_backend TO "+killerIdent); err != nil {
		t.Fatal(err)
	}
	if err := killSession(ctx, killerDB, victimPID); err != nil {
		t.Fatalf("Kill after GRANT pg_signal_backend: %v", err)
	}
	if h, _ := holderOf(ctx, admin, name); h != "" {
		t.Errorf("after Kill, Holder = %q, want the lock free", h)
	}
}

// tempRole creates a login role with a random name and password, opens a
// database as that role, and drops both when the test ends.
func tempRole(t *testing.T, admin *sql.DB, prefix string) (string, *sql.DB) {
	t.Helper()
	ctx := testCtx(t)
	role := unique(prefix)
	password := unique("pw")
	ident := pgx.Identifier{role}.Sanitize()
	if _, err := admin.ExecContext(ctx, "CREATE ROLE "+ident+" LOGIN PASSWORD '"+password+"'"); err != nil {
		t.Fatalf("create role: %v", err)
	}
	cfg, err := pgx.ParseConfig(liveDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.User, cfg.Password = role, password
	db := stdlib.OpenDB(*cfg)
	t.Cleanup(func() {
		_ = db.Close()
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = admin.ExecContext(cctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1", role)
		if _, err := admin.ExecContext(cctx, "DROP ROLE IF EXISTS "+ident); err != nil {
			t.Errorf("drop role %s: %v", role, err)
		}
	})
	if err := db.PingContext(ctx); err != nil {
		t.Fatalf("connect as %s: %v", role, err)
	}
	return role, db
}
