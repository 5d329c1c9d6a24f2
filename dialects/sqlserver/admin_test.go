package sqlserver

import (
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// TestListLocksSimulated drives what locks ls and unlock do through
// sqlkit.DB: the lock tables found in sys.tables, a table lock,
// Liquibase's lock (read and released with this package's SQL: @pN
// parameters, LOCKED bound as a bit) and an application lock with its
// session.
func TestListLocksSimulated(t *testing.T) {
	sim := newSim()
	granted := time.Now().UTC().Add(-3 * time.Minute).Truncate(time.Millisecond)
	sim.liquibase = &liquibaseRow{locked: true, granted: granted, owner: "ci-runner (10.0.0.5)"}
	db := sim.detected(t)
	ctx := t.Context()
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
	holdOn(t, db, "job")

	listing, err := db.ListLocks(ctx, dialects.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]dialects.LockEntry{}
	for _, e := range listing.Locks {
		got[e.Name] = e
	}
	if e := got["nightly"]; e.State != dialects.StateHeld || e.Owner != "node-1" || e.Source != "schedlock" {
		t.Errorf("table lock: %+v (all: %+v)", e, listing.Locks)
	}
	if e := got[dialects.LiquibaseLockName]; e.State != dialects.StateHeld || e.Owner != "ci-runner (10.0.0.5)" || !e.LockedAt.Equal(granted) || e.Source != liquibaseTable {
		t.Errorf("Liquibase lock: %+v; want held by ci-runner since %s", e, granted)
	}
	if e := got["job"]; e.State != dialects.StateHeld || e.Holder == nil || e.Source != lockSource {
		t.Errorf("application lock: %+v", e)
	}

	lb, err := db.Liquibase("")
	if err != nil {
		t.Fatal(err)
	}
	if changed, err := lb.Release(ctx, "someone else"); err != nil || changed {
		t.Errorf("guarded release by another owner = %v, %v; want no change", changed, err)
	}
	if changed, err := lb.ForceRelease(ctx); err != nil || !changed {
		t.Errorf("force release = %v, %v; want a change", changed, err)
	}
	if row, found, err := lb.Inspect(ctx); err != nil || !found || row.Locked || row.Owner != "" || !row.LockedAt.IsZero() || row.DBNow.IsZero() {
		t.Errorf("Liquibase row after the release = %+v, %v, %v; want free", row, found, err)
	}
}
