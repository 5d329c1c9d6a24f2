package oracle

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// foreignLock makes a session of another application hold the DBMS_LOCK
// lock lockName (allocated without schedlock's prefix), and returns its
// session id.
func foreignLock(t *testing.T, sim *oraSim, db *Backend, lockName string) string {
	t.Helper()
	conn := pin(t, db.SQL)
	if _, err := conn.ExecContext(testCtx(t), currentUserSQL); err != nil { // any statement opens the session
		t.Fatal(err)
	}
	sim.Mu.Lock()
	defer sim.Mu.Unlock()
	var owner *simSession
	for _, s := range sim.sessions {
		if owner == nil || s.fs.ID > owner.fs.ID {
			owner = s
		}
	}
	sim.Locks.Grant(lockName, owner.fs.ID, time.Now().Add(-90*time.Second))
	return formatSessionID(owner.sid, owner.serial, 1)
}

// TestLockAdminSimulated drives what locks ls and unlock do through the
// backend's kit DB: table discovery, the listing of table, Liquibase and
// DBMS_LOCK locks with their holders, FindLock, a guarded Liquibase
// release, and a kill that frees a session lock.
func TestLockAdminSimulated(t *testing.T) {
	cfg := config19c()
	granted := time.Now().UTC().Add(-5 * time.Minute).Truncate(time.Millisecond)
	cfg.Liquibase = &LiquibaseRow{Locked: true, Owner: "ci-runner (10.0.0.5)", Granted: granted}
	sim, db := openSim(t, cfg)
	ctx := testCtx(t)

	tl, err := db.TableLocker(dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tl.Acquire(ctx, "nightly", dialects.Options{Owner: "node-1", AtMost: time.Hour}); err != nil {
		t.Fatal(err)
	}
	lease, holder := holdOne(t, db, "job")
	long := strings.Repeat("long-name-", 20)
	_, longHolder := holdOne(t, db, long)
	other := foreignLock(t, sim, db, "MYAPP_BATCH")

	tables, err := db.LockTables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantTables := []dialects.Table{{Preset: dialects.PresetSchedlock, Name: "SCHEDLOCK"}, {Preset: dialects.PresetLiquibase, Name: "DATABASECHANGELOGLOCK"}}
	if len(tables) != len(wantTables) || tables[0] != wantTables[0] || tables[1] != wantTables[1] {
		t.Fatalf("LockTables = %+v; want %+v", tables, wantTables)
	}

	listing, err := db.ListLocks(ctx, dialects.ListOptions{Names: nil})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]dialects.LockEntry{}
	for _, e := range listing.Locks {
		key := e.Name
		if key == "" {
			key = "key:" + e.Key
		}
		byName[key] = e
	}
	if e := byName["nightly"]; e.State != dialects.StateHeld || e.Owner != "node-1" || e.Source != "SCHEDLOCK" || !e.HasToken {
		t.Errorf("table lock: %+v", e)
	}
	if e := byName[dialects.LiquibaseLockName]; e.State != dialects.StateHeld || e.Owner != "ci-runner (10.0.0.5)" || !e.LockedAt.Equal(granted) {
		t.Errorf("Liquibase lock: %+v; want held by ci-runner since %s", e, granted)
	}
	e := byName["job"]
	if e.State != dialects.StateHeld || e.Strategy != dialects.StrategySession || e.Holder == nil || e.Holder.SessionID != holder ||
		e.Holder.User != "APP" || e.Holder.Client != "sim-host" || e.Source != SourceLockViews || e.LockedAt.IsZero() || e.Holder.Since.IsZero() {
		t.Errorf("session lock job: %+v (holder %+v); want held by %s", e, e.Holder, holder)
	}
	if e := byName[LockName(long)[len(LockNamePrefix):]]; e.Holder == nil || e.Holder.SessionID != longHolder {
		t.Errorf("the shortened name of a long lock is not listed under its stored name: %+v", listing.Locks)
	}
	if e := byName["key:MYAPP_BATCH"]; e.Name != "" || e.Holder == nil || e.Holder.SessionID != other || e.Age() < 80*time.Second {
		t.Errorf("another application's lock: %+v; want no name, key MYAPP_BATCH, held by %s for about 90s", e, other)
	}

	// A long name given as a pattern labels its lock.
	labelled, err := db.ListLocks(ctx, dialects.ListOptions{Names: []string{long}})
	if err != nil {
		t.Fatal(err)
	}
	if len(labelled.Locks) != 1 || labelled.Locks[0].Name != long {
		t.Errorf("ListLocks(--name long) = %+v; want the one lock, under its full name", labelled.Locks)
	}

	found, err := db.FindLock(ctx, "job", nil)
	if err != nil || len(found.Locks) != 1 || found.Locks[0].Holder == nil || found.Locks[0].Holder.SessionID != holder {
		t.Fatalf("FindLock(job) = %+v, %v", found, err)
	}

	lb, err := db.Liquibase("")
	if err != nil {
		t.Fatal(err)
	}
	if changed, err := lb.Release(ctx, "someone else"); err != nil || changed {
		t.Errorf("guarded Liquibase release by another owner = %v, %v; want no change", changed, err)
	}
	if changed, err := lb.Release(ctx, "ci-runner (10.0.0.5)"); err != nil || !changed {
		t.Errorf("guarded Liquibase release by its owner = %v, %v; want a change", changed, err)
	}
	if row, ok, err := lb.Inspect(ctx); err != nil || !ok || row.Locked || row.Owner != "" || !row.LockedAt.IsZero() {
		t.Errorf("Liquibase row after the release = %+v, %v, %v; want free", row, ok, err)
	}

	if err := db.LockAdmin().Kill(ctx, holder); err != nil {
		t.Fatalf("Kill(%s): %v", holder, err)
	}
	select {
	case <-lease.Done():
	case <-time.After(2 * time.Second):
		t.Fatal("the killed session's lease was not told")
	}
	if _, held, err := db.LockAdmin().SessionLock(ctx, "job"); err != nil || held {
		t.Errorf("SessionLock(job) after the kill = %v, %v; want free", held, err)
	}
	sim.AssertUnderstood(t)
}

// TestLockAdminWithoutViewGrants: without SELECT on the lock views the
// listing says how to enable it, and SessionLock still tells a held lock
// from a free one with a zero-wait REQUEST that leaves the free lock free.
func TestLockAdminWithoutViewGrants(t *testing.T) {
	cfg := config19c()
	cfg.NoViews = true
	sim, db := openSim(t, cfg)
	ctx := testCtx(t)
	l, err := db.SessionLocker()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(ctx, "job", dialects.Options{}); err != nil {
		t.Fatal(err)
	}
	admin := db.LockAdmin()
	_, err = admin.SessionLocks(ctx, nil)
	var unavailable *dialects.ListingUnavailableError
	if !errors.As(err, &unavailable) || !strings.Contains(unavailable.Enable, "GRANT SELECT ON SYS.GV_$LOCK TO APP") || !errors.Is(err, dialects.ErrUnsupported) {
		t.Fatalf("SessionLocks without grants = %v; want a *dialects.ListingUnavailableError with the GRANTs", err)
	}
	e, held, err := admin.SessionLock(ctx, "job")
	if err != nil || !held || e.State != dialects.StateHeld || e.Source != SourceRequestTest || e.Holder != nil {
		t.Errorf("SessionLock(job) = %+v, %v, %v; want held, holder unknown", e, held, err)
	}
	if _, held, err := admin.SessionLock(ctx, "free"); err != nil || held {
		t.Errorf("SessionLock(free) = %v, %v; want free", held, err)
	}
	if n := sim.HeldLocks(); n != 1 {
		t.Errorf("%d DBMS_LOCK locks held after the tests; want only job's", n)
	}

	listing, err := db.ListLocks(ctx, dialects.ListOptions{Names: []string{"job"}, Strategy: dialects.StrategySession})
	if err != nil {
		t.Fatal(err)
	}
	if len(listing.Locks) != 1 || listing.Locks[0].Name != "job" || len(listing.Notes) != 1 || !strings.Contains(listing.Notes[0], "GV$LOCK") {
		t.Errorf("ListLocks(--name job) = %+v; want job, and a note on the grants", listing)
	}
}

// TestSessionLockWithoutAnyGrant: with neither the views nor DBMS_LOCK,
// SessionLock reports the views' missing grants.
func TestSessionLockWithoutAnyGrant(t *testing.T) {
	cfg := config19c()
	cfg.NoViews, cfg.NoDBMSLock = true, true
	_, db := openSim(t, cfg)
	if db.HasSessionLocks() {
		t.Error("HasSessionLocks is true without EXECUTE on SYS.DBMS_LOCK")
	}
	_, _, err := db.NewLockAdmin(dialects.SessionNames{}).SessionLock(testCtx(t), "job")
	var pe *dialects.PrivilegeError
	if !errors.As(err, &pe) || !strings.Contains(pe.Grant, "SYS.GV_$LOCK") {
		t.Errorf("SessionLock = %v; want the views' *dialects.PrivilegeError", err)
	}
}

// TestLockTablesEmpty: a schema without lock tables gives an empty list.
func TestLockTablesEmpty(t *testing.T) {
	_, db := openSim(t, config19c())
	tables, err := db.LockTables(testCtx(t))
	if err != nil || tables == nil || len(tables) != 0 {
		t.Errorf("LockTables on an empty schema = %#v, %v; want an empty list", tables, err)
	}
}
