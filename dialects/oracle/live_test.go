package oracle

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/oralike/oraliketest"
)

// dsnEnv names the variable that points the live tests at an Oracle
// server, as a go-ora URL: oracle://user:password@host:1521/service.
const dsnEnv = "SCHEDLOCK_TEST_ORACLE_DSN"

// liveDB opens the live server. The test is skipped when dsnEnv is unset
// and fails when it is set but the server does not answer.
func liveDB(t testing.TB) *sql.DB { return oraliketest.LiveDB(t, dsnEnv, "oracle") }

// liveDetected opens the live server with New.
func liveDetected(t testing.TB) *Backend { return oraliketest.Detect(t, liveDB(t), New) }

// shortTables is one table per preset under names of at most 30 bytes, the
// identifier limit before 12.2, unique to the run.
func shortTables() []dialects.Table {
	var b [4]byte
	_, _ = rand.Read(b[:])
	base := "sl" + hex.EncodeToString(b[:])
	var out []dialects.Table
	for _, p := range dialects.Presets() {
		out = append(out, dialects.Table{Preset: p, Name: base + "_" + p})
	}
	return out
}

func TestLiveDetect(t *testing.T) {
	db := liveDetected(t)
	if db.Info.Product != Product || db.Info.Version == "" || db.Info.Banner == "" {
		t.Errorf("Info = %+v; want oracle with a version and a banner", db.Info)
	}
	strategy, why := db.Recommend()
	t.Logf("detected %+v; recommended %s: %s", db.Info, strategy, why)
}

func TestLiveListSessionLocks(t *testing.T) {
	db := liveDetected(t)
	name := "schedlock-live-list-" + rand.Text()
	lease, id := holdOne(t, db, name)
	defer func() { _ = lease.Release(context.Background()) }()
	locks, err := ListSessionLocks(testCtx(t), db.SQL)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range locks {
		if l.Name == name {
			if l.SessionID != id || !l.Granted || l.Mode != 6 {
				t.Errorf("listed %+v; want held in mode 6 by %s", l, id)
			}
			return
		}
	}
	t.Errorf("the lock %q held by %s is not listed among %d locks", name, id, len(locks))
}

// TestLiveLockAdmin finds a held DBMS_LOCK lock through what locks ls and
// unlock use: ListLocks by name and FindLock, both naming its session.
func TestLiveLockAdmin(t *testing.T) {
	db := liveDetected(t)
	name := "schedlock-live-admin-" + rand.Text()
	lease, id := holdOne(t, db, name)
	defer func() { _ = lease.Release(context.Background()) }()
	listing, err := db.ListLocks(testCtx(t), dialects.ListOptions{Names: []string{name}, Strategy: dialects.StrategySession})
	if err != nil {
		t.Fatal(err)
	}
	if len(listing.Locks) != 1 || listing.Locks[0].Holder == nil || listing.Locks[0].Holder.SessionID != id {
		t.Errorf("ListLocks(%q) = %+v; want the lock held by %s", name, listing, id)
	}
	found, err := db.FindLock(testCtx(t), name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(found.Locks) != 1 || found.Locks[0].Holder == nil || found.Locks[0].Holder.SessionID != id {
		t.Errorf("FindLock(%q) = %+v; want the lock held by %s", name, found, id)
	}
}
