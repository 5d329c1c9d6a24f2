package sqlserver

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// holdOn acquires name with the session locker of db and releases it at
// the end of the test.
func holdOn(t *testing.T, db *Backend, name string) dialects.Lease {
	t.Helper()
	l, err := db.SessionLocker()
	if err != nil {
		t.Fatal(err)
	}
	lease, err := l.Acquire(t.Context(), name, dialects.Options{})
	if err != nil {
		t.Fatalf("acquire %q: %v", name, err)
	}
	t.Cleanup(func() { _ = lease.Release(t.Context()) })
	return lease
}

func TestHolderAndListing(t *testing.T) {
	sim := newSim()
	db := sim.detected(t)
	long := "nightly-report-for-region-eu-west-1"
	holdOn(t, db, "job")
	holdOn(t, db, long)

	e, found, err := db.LockAdmin().SessionLock(t.Context(), long)
	if err != nil || !found || e.Holder == nil || e.Holder.SessionID == "" {
		t.Fatalf("SessionLock = %+v, %v, %v; want the holding session", e, found, err)
	}
	holder := e.Holder.SessionID
	if free, found, err := db.LockAdmin().SessionLock(t.Context(), "free"); err != nil || found {
		t.Errorf("SessionLock of a free lock = %+v, %v, %v; want none", free, found, err)
	}

	locks, err := ListSessionLocks(t.Context(), db.SQL)
	if err != nil {
		t.Fatal(err)
	}
	resources := map[string]SessionLock{}
	for _, l := range locks {
		resources[l.Resource] = l
	}
	got, ok := resources[LockName(long)]
	if !ok || got.SessionID != holder || !got.Granted() || got.OwnerType != "SESSION" || got.PrincipalID != 0 || got.Login != "app_login" || got.DBNow.IsZero() {
		t.Errorf("listing of %q: %+v (all: %+v)", LockName(long), got, locks)
	}

	admin := db.LockAdmin()
	entries, err := admin.SessionLocks(t.Context(), []string{long})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]dialects.LockEntry{}
	for _, e := range entries {
		names[e.Name] = e
	}
	if e, ok := names[long]; !ok || e.State != dialects.StateHeld || e.Holder == nil || e.Holder.SessionID != holder || e.Source != lockSource {
		t.Errorf("SessionLocks labelled %q: %+v (all: %+v)", long, e, entries)
	}
	if _, ok := names["job"]; !ok {
		t.Errorf("SessionLocks lacks the unlabelled lock job: %+v", entries)
	}
	e, found, err = admin.SessionLock(t.Context(), long)
	if err != nil || !found || e.Holder == nil || e.Holder.SessionID != holder {
		t.Errorf("SessionLock(%q) = %+v, %v, %v", long, e, found, err)
	}
}

// TestListingWithoutViewServerState proves a refused sys.dm_tran_locks is
// reported with the GRANT that fixes it, and that SessionLock still tells
// a held lock from a free one with APPLOCK_TEST.
func TestListingWithoutViewServerState(t *testing.T) {
	sim := newSim()
	db := sim.detected(t)
	holdOn(t, db, "job")
	sim.noViewState = true

	admin := db.LockAdmin()
	_, err := admin.SessionLocks(t.Context(), nil)
	var unavailable *dialects.ListingUnavailableError
	if !errors.As(err, &unavailable) || unavailable.Enable != "USE master; GRANT VIEW SERVER STATE TO [app_login]" {
		t.Errorf("SessionLocks = %v; want a ListingUnavailableError with the GRANT", err)
	}
	e, found, err := admin.SessionLock(t.Context(), "job")
	if err != nil || !found || e.State != dialects.StateHeld {
		t.Errorf("SessionLock(job) = %+v, %v, %v; want held", e, found, err)
	}
	if _, found, err := admin.SessionLock(t.Context(), "other"); err != nil || found {
		t.Errorf("SessionLock(other) = %v, %v; want not found", found, err)
	}

	sim.engineEdition = 5
	azure := sim.detected(t)
	_, err = azure.LockAdmin().SessionLocks(t.Context(), nil)
	if !errors.As(err, &unavailable) || unavailable.Enable != "GRANT VIEW DATABASE STATE TO [app_user]" {
		t.Errorf("Azure SQL Database: SessionLocks = %v; want VIEW DATABASE STATE", err)
	}
}

func TestKill(t *testing.T) {
	sim := newSim()
	db := sim.detected(t)
	lease := holdOn(t, db, "job")
	admin := db.LockAdmin()
	e, found, err := admin.SessionLock(t.Context(), "job")
	if err != nil || !found || e.Holder == nil || e.Holder.SessionID == "" {
		t.Fatalf("SessionLock: %+v, %v, %v", e, found, err)
	}
	holder := e.Holder.SessionID

	for _, bad := range []string{"", "x", "-1", "0", "1; DROP TABLE t", "99999999999"} {
		if err := admin.Kill(t.Context(), bad); !errors.Is(err, dialects.ErrInvalid) {
			t.Errorf("Kill(%q) = %v; want ErrInvalid", bad, err)
		}
	}
	if err := admin.Kill(t.Context(), "4242"); err == nil || !strings.Contains(err.Error(), "no longer exists") {
		t.Errorf("Kill of a session that does not exist = %v", err)
	}

	sim.noKill = true
	err = admin.Kill(t.Context(), holder)
	var priv *dialects.PrivilegeError
	if !errors.As(err, &priv) || priv.Privilege != "ALTER ANY CONNECTION" || priv.Grant != "USE master; GRANT ALTER ANY CONNECTION TO [app_login]" || errNumber(err) != errKillDenied {
		t.Errorf("refused KILL = %v; want a PrivilegeError for ALTER ANY CONNECTION carrying error 6102", err)
	}
	azure := &SessionOps{Info: dialects.Info{Variant: VariantAzureSQLDatabase}}
	if err := azure.kill(t.Context(), db.SQL, holder); !errors.As(err, &priv) || priv.Grant != "GRANT KILL DATABASE CONNECTION TO [app_user]" {
		t.Errorf("refused KILL on Azure SQL Database = %v; want KILL DATABASE CONNECTION", err)
	}

	sim.noKill = false
	if err := db.LockAdmin().Kill(t.Context(), holder); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	select {
	case <-lease.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the killed lease was not told")
	}
	if !errors.Is(lease.Err(), dialects.ErrLeaseLost) {
		t.Errorf("killed lease Err = %v; want ErrLeaseLost", lease.Err())
	}
}

func TestParseResourceDescription(t *testing.T) {
	tests := []struct {
		in        string
		principal int
		name      string
		hash      string
		ok        bool
	}{
		{"0:[PhoneCall_6ae8d389-f282-e311-b85]:(2579568b)                                   ", 0, "PhoneCall_6ae8d389-f282-e311-b85", "2579568b", true},
		{"5:[a]:b:(c]:(1a2b3c4d)", 5, "a]:b:(c", "1a2b3c4d", true},
		{"0:job:(abcd)", 0, "job", "abcd", true},
		{"0:[]:(abcd)", 0, "", "abcd", true},
		{"x:[job]:(abcd)", 0, "", "", false},
		{"0:[job]", 0, "", "", false},
		{"", 0, "", "", false},
	}
	for _, tt := range tests {
		p, name, hash, ok := ParseResourceDescription(tt.in)
		if p != tt.principal || name != tt.name || hash != tt.hash || ok != tt.ok {
			t.Errorf("ParseResourceDescription(%q) = %d, %q, %q, %v; want %d, %q, %q, %v", tt.in, p, name, hash, ok, tt.principal, tt.name, tt.hash, tt.ok)
		}
	}
}

func TestLockTables(t *testing.T) {
	sim := newSim()
	db := sim.detected(t)
	for _, preset := range []string{dialects.PresetShedlock, dialects.PresetSchedlock} {
		tl, err := db.TableLocker(dialects.Table{Preset: preset})
		if err != nil {
			t.Fatal(err)
		}
		if err := tl.CreateTable(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	tables, err := db.LockAdmin().LockTables(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []dialects.Table{{Preset: dialects.PresetSchedlock, Name: "schedlock"}, {Preset: dialects.PresetShedlock, Name: "shedlock"}}
	if len(tables) != 2 || tables[0] != want[0] || tables[1] != want[1] {
		t.Errorf("LockTables = %+v, want %+v", tables, want)
	}
}

// TestListLocks runs the generic listing over a lease table and the
// application locks.
func TestListLocks(t *testing.T) {
	sim := newSim()
	db := sim.detected(t)
	tl, err := db.TableLocker(dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.CreateTable(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := tl.Acquire(t.Context(), "table-job", dialects.Options{Owner: "node-1"}); err != nil {
		t.Fatal(err)
	}
	holdOn(t, db, "session-job")
	listing, err := db.ListLocks(t.Context(), dialects.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]dialects.LockEntry{}
	for _, e := range listing.Locks {
		seen[e.Name] = e
	}
	if e := seen["table-job"]; e.Owner != "node-1" || e.State != dialects.StateHeld || e.Strategy != dialects.StrategyTable {
		t.Errorf("table lock: %+v", e)
	}
	if e := seen["session-job"]; e.State != dialects.StateHeld || e.Holder == nil || e.Strategy != dialects.StrategySession {
		t.Errorf("session lock: %+v", e)
	}
}
