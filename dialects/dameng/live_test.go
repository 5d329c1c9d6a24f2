package dameng

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/oralike"
	"github.com/schedlock/schedlock/dialects/internal/oralike/oraliketest"
	"github.com/schedlock/schedlock/internal/livetest"
)

// dsnEnv names the variable that points the live tests at a DM8 server, as
// the driver's URL: dm://user:password@host:5236?schema=S. The driver is
// only in builds with the dameng tag:
//
//	go get gitee.com/chunanyong/dm@v1.8.13
//	SCHEDLOCK_TEST_DAMENG_DSN=dm://… go test -tags dameng ./dialects/dameng/
const dsnEnv = "SCHEDLOCK_TEST_DAMENG_DSN"

// liveDB opens the live server. The test is skipped when dsnEnv is unset
// and fails when it is set but the driver is missing or the server does
// not answer.
func liveDB(t testing.TB) *sql.DB {
	t.Helper()
	livetest.DSN(t, dsnEnv) // skips the test when dsnEnv is unset
	if !DriverLinked {
		t.Fatalf("%s is set, but %s", dsnEnv, DriverHint)
	}
	return oraliketest.LiveDB(t, dsnEnv, Driver)
}

// liveDetected opens the live server with New.
func liveDetected(t testing.TB) *Backend { return oraliketest.Detect(t, liveDB(t), New) }

// uniqueName is a table name unique to the run.
func uniqueName(prefix string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

func TestLiveDetect(t *testing.T) {
	db := liveDetected(t)
	if db.Info.Product != Product || db.Info.Version == "" || db.Info.Banner == "" {
		t.Errorf("Info = %+v; want dameng with a version and a banner", db.Info)
	}
	strategy, why := db.Recommend()
	t.Logf("detected %+v; recommended %s: %s", db.Info, strategy, why)
}

// TestLiveErrorCodes proves, on the server, the error codes the table
// strategy depends on: a duplicate primary key is what IsDuplicateKey
// recognises, and a missing table what IsMissingTable recognises.
func TestLiveErrorCodes(t *testing.T) {
	db := liveDB(t)
	ctx := testCtx(t)
	table := uniqueName("sl_codes_")
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+table+" (id INT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = db.ExecContext(context.Background(), (&Builder{}).Drop(dialects.Schema{Table: table})) }()
	if _, err := db.ExecContext(ctx, "INSERT INTO "+table+" (id) VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	_, err := db.ExecContext(ctx, "INSERT INTO "+table+" (id) VALUES (1)")
	code, _ := ErrorCode(err)
	if err == nil || !IsDuplicateKey(err) {
		t.Errorf("duplicate key: %v (code %d); IsDuplicateKey does not recognise it", err, code)
	}
	t.Logf("duplicate key: code %d: %s", code, oralike.OneLine(err))
	_, err = db.ExecContext(ctx, "SELECT * FROM "+uniqueName("sl_missing_")+" WHERE 1 = 0")
	code, _ = ErrorCode(err)
	if err == nil || !IsMissingTable(err) {
		t.Errorf("missing table: %v (code %d); IsMissingTable does not recognise it", err, code)
	}
	t.Logf("missing table: code %d: %s", code, oralike.OneLine(err))
}

// TestLiveListSessionLocks: where DBMS_LOCK is installed, a held lock is
// listed with the session holding it; where it is not, the session
// strategy is refused with the call that installs it.
func TestLiveListSessionLocks(t *testing.T) {
	db := liveDetected(t)
	l, err := db.SessionLocker()
	if err != nil {
		if !errors.Is(err, dialects.ErrUnsupported) || !strings.Contains(err.Error(), "SP_CREATE_SYSTEM_PACKAGES") {
			t.Fatalf("session locker refused with %v; want ErrUnsupported naming SP_CREATE_SYSTEM_PACKAGES", err)
		}
		t.Logf("DBMS_LOCK is not installed on this server; refused as expected: %v", err)
		return
	}
	ctx := testCtx(t)
	name := "schedlock-live-list-" + rand.Text()
	lease, err := l.Acquire(ctx, name, dialects.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lease.Release(context.Background()) }()
	e, found, err := db.LockAdmin().SessionLock(ctx, name)
	if err != nil || !found || e.Holder == nil || e.Holder.SessionID == "" {
		t.Fatalf("SessionLock = %+v, %v, %v; want the session holding %q", e, found, err, name)
	}
	holder := e.Holder.SessionID
	locks, err := ListSessionLocks(ctx, db.SQL)
	if err != nil {
		t.Fatal(err)
	}
	for _, sl := range locks {
		if sl.Name == name {
			if sl.SessionID != holder || !sl.Granted {
				t.Errorf("listed %+v; want held by %s", sl, holder)
			}
			return
		}
	}
	t.Errorf("the lock %q held by %s is not listed among %d locks", name, holder, len(locks))
}
