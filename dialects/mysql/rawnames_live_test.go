package mysql

import (
	"errors"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
)

// openRaw opens the live server as a Target with x-session-names=raw, as
// the command line does, and returns it with its session locker.
func openRaw(t *testing.T) (*Backend, dialects.Locker) {
	t.Helper()
	b, err := Open(testContext(t), dialects.Target{
		Conn:    liveConfig(t).FormatDSN(),
		Options: map[string]string{dialects.OptionSessionNames: dialects.SessionNamesRaw},
	})
	if err != nil {
		t.Fatalf("open with raw session names: %v", err)
	}
	db := b.(*Backend)
	t.Cleanup(func() { _ = db.Close() })
	locker, err := db.SessionLocker()
	if err != nil {
		t.Fatal(err)
	}
	return db, locker
}

// With raw session names the lock called NAME is GET_LOCK('NAME') of
// every other client, both ways: a client's lock makes Acquire refuse,
// and while the locker holds it another client's GET_LOCK('NAME', 0) gets
// 0 and IS_USED_LOCK('NAME') names the locker's connection. The lock
// administration finds either holder by the name.
func TestRawSessionNamesAreOtherClientsGetLock(t *testing.T) {
	ctx := testContext(t)
	db, locker := openRaw(t)
	name := uniqueName("sched:order_close-")
	other := conn(t, openLive(t, nil))
	otherID := connectionID(t, other)

	var got int
	if err := other.QueryRowContext(ctx, "SELECT GET_LOCK(?, 10)", name).Scan(&got); err != nil || got != 1 {
		t.Fatalf("GET_LOCK by another client: %d, %v", got, err)
	}
	_, err := locker.Acquire(ctx, name, dialects.Options{})
	if !errors.Is(err, dialects.ErrHeld) {
		t.Fatalf("Acquire while another client holds GET_LOCK(%q): %v, want ErrHeld", name, err)
	}
	admin := db.LockAdmin()
	e, found, err := admin.SessionLock(ctx, name)
	if err != nil || !found || e.Holder.SessionID != otherID || e.Key != name || e.Name != name {
		t.Fatalf("raw SessionLock(%q) = %+v, %v, %v; want held by %s", name, e, found, err, otherID)
	}
	if err := other.QueryRowContext(ctx, "SELECT RELEASE_LOCK(?)", name).Scan(&got); err != nil || got != 1 {
		t.Fatalf("RELEASE_LOCK: %d, %v", got, err)
	}

	lease, err := locker.Acquire(ctx, name, dialects.Options{})
	if err != nil {
		t.Fatalf("Acquire of a free raw name: %v", err)
	}
	if err := other.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", name).Scan(&got); err != nil || got != 0 {
		t.Fatalf("GET_LOCK(%q, 0) while schedlock holds it: %d, %v; want 0", name, got, err)
	}
	var holder *int64
	if err := other.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?)", name).Scan(&holder); err != nil || holder == nil {
		t.Fatalf("IS_USED_LOCK(%q) while schedlock holds it: %v, %v; want its connection", name, holder, err)
	}
	e, found, err = admin.SessionLock(ctx, name)
	if err != nil || !found || e.Holder.SessionID == otherID {
		t.Fatalf("raw SessionLock while the locker holds it: %+v, %v, %v", e, found, err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := other.QueryRowContext(ctx, "SELECT IS_USED_LOCK(?)", name).Scan(&holder); err != nil || holder != nil {
		t.Fatalf("IS_USED_LOCK after Release: %v, %v; want NULL", holder, err)
	}
}

// Scoped names (the default) keep their own lock, DATABASE/NAME, yet the
// lock administration still finds GET_LOCK('NAME') of another client, by
// IS_USED_LOCK, which needs neither performance_schema nor a plugin:
// FindLock lists both, each by its key.
func TestScopedAdminFindsRawGetLock(t *testing.T) {
	ctx := testContext(t)
	db := openDetected(t)
	name := uniqueName("order_close-")
	other := conn(t, openLive(t, nil))
	otherID := connectionID(t, other)
	var got int
	if err := other.QueryRowContext(ctx, "SELECT GET_LOCK(?, 10)", name).Scan(&got); err != nil || got != 1 {
		t.Fatalf("GET_LOCK by another client: %d, %v", got, err)
	}
	found, err := db.FindLock(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(found.Locks) != 1 || found.Locks[0].Key != name || found.Locks[0].Holder.SessionID != otherID {
		t.Fatalf("FindLock(%q) = %+v; want GET_LOCK(%q) of session %s", name, found.Locks, name, otherID)
	}
	locker, err := db.SessionLocker()
	if err != nil {
		t.Fatal(err)
	}
	lease, err := locker.Acquire(ctx, name, dialects.Options{})
	if err != nil {
		t.Fatalf("scoped Acquire beside another client's GET_LOCK(%q): %v", name, err)
	}
	defer lease.Release(ctx)
	found, err = db.FindLock(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	for _, e := range found.Locks {
		keys[e.Key] = e.Holder.SessionID
	}
	if len(found.Locks) != 2 || keys[name] != otherID || keys[LockName(db.Database, name)] == "" {
		t.Fatalf("FindLock with both held = %+v; want the scoped and the raw lock", found.Locks)
	}
}

// Raw names are not shortened: one over GET_LOCK's 64 characters is
// refused before any statement, as ErrInvalid.
func TestRawSessionNameLimit(t *testing.T) {
	_, locker := openRaw(t)
	long := strings.Repeat("n", MaxLockNameRunes+1)
	if err := dialects.CheckLockName(locker, long); !errors.Is(err, dialects.ErrInvalid) {
		t.Errorf("CheckLockName of %d characters: %v, want ErrInvalid", len(long), err)
	}
	if _, err := locker.Acquire(testContext(t), long, dialects.Options{}); !errors.Is(err, dialects.ErrInvalid) {
		t.Errorf("Acquire of %d characters: %v, want ErrInvalid", len(long), err)
	}
	if err := dialects.CheckLockName(locker, strings.Repeat("é", MaxLockNameRunes)); err != nil {
		t.Errorf("64 two-byte characters: %v", err)
	}
}

// MariaDB's documentation calls GET_LOCK names case-insensitive, but the
// server keeps Order_Close and order_close apart: two locks.
func TestGetLockLetterCase(t *testing.T) {
	ctx := testContext(t)
	db := openDetected(t)
	name := uniqueName("Order_Close-")
	a, b := conn(t, db.SQL), conn(t, db.SQL)
	var got int
	if err := a.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", name).Scan(&got); err != nil || got != 1 {
		t.Fatalf("GET_LOCK(%q): %d, %v", name, got, err)
	}
	if err := b.QueryRowContext(ctx, "SELECT GET_LOCK(?, 0)", strings.ToLower(name)).Scan(&got); err != nil {
		t.Fatal(err)
	}
	defer b.ExecContext(ctx, "SELECT RELEASE_ALL_LOCKS()")
	if db.Info.Product == dialects.ProductMariaDB && got != 1 {
		t.Errorf("MariaDB %s: GET_LOCK(%q) while another session holds %q answered %d; want 1, two locks", db.Info.Version, strings.ToLower(name), name, got)
	}
	t.Logf("%s %s: GET_LOCK of the lower-case spelling while the other is held: %d (1: two locks)", db.Info.Product, db.Info.Version, got)
}

// locks ls --name NAME finds GET_LOCK('NAME') of another client both
// ways the server allows: from the listing (performance_schema, or
// MariaDB's metadata_lock_info plugin, installed here for the test when
// neither lists and uninstalled again), and, where nothing lists, from
// IS_USED_LOCK. With raw session names the listed lock carries NAME as
// its name; with scoped names it is matched on its key.
func TestListingFindsRawGetLockByName(t *testing.T) {
	ctx := testContext(t)
	scoped := openDetected(t)
	raw, _ := openRaw(t)
	name := uniqueName("order_close-")
	other := conn(t, openLive(t, nil))
	otherID := connectionID(t, other)
	var got int
	if err := other.QueryRowContext(ctx, "SELECT GET_LOCK(?, 10)", name).Scan(&got); err != nil || got != 1 {
		t.Fatalf("GET_LOCK by another client: %d, %v", got, err)
	}
	check := func(t *testing.T, wantSource string) {
		t.Helper()
		for _, c := range []struct {
			db       *Backend
			wantName string
		}{{scoped, ""}, {raw, name}} {
			listing, err := c.db.ListLocks(ctx, dialects.ListOptions{Names: []string{name}, Strategy: dialects.StrategySession})
			if err != nil {
				t.Fatal(err)
			}
			if len(listing.Locks) != 1 {
				t.Fatalf("raw=%v: locks ls --name %s = %+v; want the other client's lock", c.db == raw, name, listing.Locks)
			}
			e := listing.Locks[0]
			if e.Key != name || e.Name != c.wantName || e.Holder.SessionID != otherID || e.Source != wantSource {
				t.Errorf("raw=%v: listed %+v; want key %q, name %q, session %s, from %s", c.db == raw, e, name, c.wantName, otherID, wantSource)
			}
		}
	}
	perfSchema, plugin := serverListing(t, scoped.SQL)
	switch {
	case perfSchema:
		check(t, SourcePerformanceSchema)
	case plugin:
		check(t, SourceMetadataLockInfo)
	default:
		check(t, SourceIsUsedLock)
		if scoped.Info.Product != dialects.ProductMariaDB {
			return
		}
		if _, err := scoped.SQL.ExecContext(ctx, "INSTALL SONAME 'metadata_lock_info'"); err != nil {
			t.Fatalf("install metadata_lock_info: %v", err)
		}
		defer func() {
			if _, err := scoped.SQL.Exec("UNINSTALL SONAME 'metadata_lock_info'"); err != nil {
				t.Errorf("uninstall metadata_lock_info: %v", err)
			}
		}()
		check(t, SourceMetadataLockInfo)
	}
}
