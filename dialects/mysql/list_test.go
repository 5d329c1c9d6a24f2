package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/fakesql"
)

// databaseDB creates a database of its own for the test, so the known lock
// table names meet no other test's tables, and opens it detected. The
// database is dropped at the end.
func databaseDB(t *testing.T) *Backend {
	t.Helper()
	admin := openLive(t, nil)
	name := uniqueName("sl_ls_")
	if _, err := admin.ExecContext(testContext(t), "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec("DROP DATABASE " + name) })
	raw := openLive(t, func(c *mysql.Config) { c.DBName = name })
	db, err := New(testContext(t), raw, nil)
	if err != nil {
		t.Fatalf("detect: %v", err)
	}
	return db
}

func mustExec(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.ExecContext(testContext(t), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// ShedLock's MySQL table (README) and Liquibase's lock table as Liquibase
// creates it on MySQL and MariaDB (LOCKED is BIT(1)).
const (
	shedlockDDL  = `CREATE TABLE shedlock (name VARCHAR(64) NOT NULL, lock_until TIMESTAMP(3) NOT NULL, locked_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))`
	liquibaseDDL = `CREATE TABLE DATABASECHANGELOGLOCK (ID INT NOT NULL, LOCKED BIT(1) NOT NULL, LOCKGRANTED datetime NULL, LOCKEDBY VARCHAR(255) NULL, CONSTRAINT PK_DATABASECHANGELOGLOCK PRIMARY KEY (ID))`
)

func TestLockAdminLiveTables(t *testing.T) {
	ctx := testContext(t)
	db := databaseDB(t)
	// Filled the way ShedLock's usingDbTime() fills it on MySQL.
	mustExec(t, db.SQL,
		shedlockDDL,
		`INSERT INTO shedlock VALUES ('held-job', TIMESTAMPADD(MICROSECOND, 600000000, UTC_TIMESTAMP(3)), TIMESTAMPADD(MICROSECOND, -60000000, UTC_TIMESTAMP(3)), 'host-a')`,
		`INSERT INTO shedlock VALUES ('dead-job', TIMESTAMPADD(MICROSECOND, -300000000, UTC_TIMESTAMP(3)), TIMESTAMPADD(MICROSECOND, -2100000000, UTC_TIMESTAMP(3)), 'host-b')`,
		`CREATE TABLE SYS_SCHED_LOCK (lock_name VARCHAR(64) PRIMARY KEY, lock_owner VARCHAR(255), acquire_time DATETIME(3), expire_time DATETIME(3))`,
		liquibaseDDL,
		`INSERT INTO DATABASECHANGELOGLOCK VALUES (1, 1, NOW(), 'build-7 (10.0.0.5)')`,
		`CREATE TABLE unrelated (id INT)`,
	)
	tables, err := db.LockAdmin().LockTables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []dialects.Table{
		{Preset: dialects.PresetShedlock, Name: "shedlock"},
		{Preset: dialects.PresetSysSchedLock, Name: "SYS_SCHED_LOCK"},
		{Preset: dialects.PresetLiquibase, Name: "DATABASECHANGELOGLOCK"},
	}
	if len(tables) != len(want) {
		t.Fatalf("LockTables = %+v, want %+v", tables, want)
	}
	for i := range want {
		if tables[i] != want[i] {
			t.Errorf("LockTables[%d] = %+v, want %+v", i, tables[i], want[i])
		}
	}

	l, err := db.ListLocks(ctx, dialects.ListOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]dialects.LockEntry{}
	for _, e := range l.Locks {
		if e.Strategy == dialects.StrategyTable {
			got[e.Name] = e
		}
	}
	if len(got) != 3 {
		t.Errorf("table locks: %+v", l.Locks)
	}
	if held := got["held-job"]; held.State != dialects.StateHeld || held.Owner != "host-a" || held.Until.Sub(held.DBNow) < 9*time.Minute || held.Until.Sub(held.DBNow) > 10*time.Minute || held.Age() < 59*time.Second {
		t.Errorf("held-job: %+v", held)
	}
	if dead := got["dead-job"]; dead.State != dialects.StateExpired || dead.Owner != "host-b" {
		t.Errorf("dead-job: %+v", dead)
	}
	lb := got["liquibase"]
	if lb.State != dialects.StateHeld || lb.Owner != "build-7 (10.0.0.5)" || lb.Source != "DATABASECHANGELOGLOCK" {
		t.Errorf("liquibase: %+v", lb)
	}
	if age := lb.Age(); lb.LockedAt.IsZero() || age < 0 || age > time.Minute {
		t.Errorf("liquibase locked at %s, database now %s", lb.LockedAt, lb.DBNow)
	}

	liq, err := db.Liquibase("DATABASECHANGELOGLOCK")
	if err != nil {
		t.Fatal(err)
	}
	if changed, err := liq.Release(ctx, "build-8 (10.0.0.6)"); err != nil || changed {
		t.Fatalf("release by another owner = %v, %v", changed, err)
	}
	if row, _, _ := liq.Inspect(ctx); !row.Locked || row.Owner != "build-7 (10.0.0.5)" {
		t.Fatalf("another owner's release changed the row: %+v", row)
	}
	if changed, err := liq.Release(ctx, "build-7 (10.0.0.5)"); err != nil || !changed {
		t.Fatalf("release by the owner = %v, %v", changed, err)
	}
	var locked int
	var granted, by sql.NullString
	if err := db.SQL.QueryRowContext(ctx, "SELECT LOCKED + 0, LOCKGRANTED, LOCKEDBY FROM DATABASECHANGELOGLOCK WHERE ID = 1").Scan(&locked, &granted, &by); err != nil {
		t.Fatal(err)
	}
	if locked != 0 || granted.Valid || by.Valid {
		t.Errorf("after release: LOCKED=%d LOCKGRANTED=%v LOCKEDBY=%v", locked, granted, by)
	}
}

// A Liquibase table with LOCKED as TINYINT(1) (older Liquibase setups and
// hand-made tables) reads and releases the same way.
func TestLiquibaseLiveTinyint(t *testing.T) {
	ctx := testContext(t)
	db := databaseDB(t)
	mustExec(t, db.SQL,
		`CREATE TABLE ops_lock (ID INT PRIMARY KEY, LOCKED TINYINT(1) NOT NULL, LOCKGRANTED DATETIME, LOCKEDBY VARCHAR(255))`,
		`INSERT INTO ops_lock VALUES (1, 1, NOW(), 'ci-runner')`,
	)
	l, err := db.ListLocks(ctx, dialects.ListOptions{Tables: []dialects.Table{{Name: "ops_lock"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Tables) != 1 || l.Tables[0].Preset != dialects.PresetLiquibase || len(l.Locks) != 1 || l.Locks[0].State != dialects.StateHeld || l.Locks[0].Owner != "ci-runner" {
		t.Fatalf("ops_lock: %+v", l)
	}
	liq, err := db.Liquibase("ops_lock")
	if err != nil {
		t.Fatal(err)
	}
	if changed, err := liq.ForceRelease(ctx); err != nil || !changed {
		t.Fatalf("force release = %v, %v", changed, err)
	}
	if row, found, err := liq.Inspect(ctx); err != nil || !found || row.Locked || row.Owner != "" || !row.LockedAt.IsZero() {
		t.Errorf("after force release: %+v, %v, %v", row, found, err)
	}
}

// serverListing reads, independently of LockAdmin, how this server can
// list user locks.
func serverListing(t *testing.T, db *sql.DB) (perfSchema, plugin bool) {
	t.Helper()
	var ps int
	if err := db.QueryRowContext(testContext(t), "SELECT @@performance_schema").Scan(&ps); err != nil {
		t.Fatal(err)
	}
	if ps == 1 {
		var enabled string
		err := db.QueryRowContext(testContext(t), "SELECT ENABLED FROM performance_schema.setup_instruments WHERE NAME = 'wait/lock/metadata/sql/mdl'").Scan(&enabled)
		perfSchema = err == nil && enabled == "YES"
	}
	var n int
	if err := db.QueryRowContext(testContext(t), "SELECT COUNT(*) FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'METADATA_LOCK_INFO' AND PLUGIN_STATUS = 'ACTIVE'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return perfSchema, n > 0
}

// holdUserLock takes GET_LOCK(LockName(database, name)) on a connection of
// its own, database being DATABASE() of db.
func holdUserLock(t *testing.T, db *sql.DB, name string) (*sql.Conn, string) {
	t.Helper()
	c := conn(t, db)
	var got int
	var database sql.NullString
	if err := c.QueryRowContext(testContext(t), "SELECT DATABASE()").Scan(&database); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRowContext(testContext(t), "SELECT GET_LOCK(?, 0)", LockName(database.String, name)).Scan(&got); err != nil || got != 1 {
		t.Fatalf("GET_LOCK: %v, %v", got, err)
	}
	return c, connectionID(t, c)
}

func TestLockAdminLiveSessionLocks(t *testing.T) {
	ctx := testContext(t)
	db := openDetected(t)
	admin := db.LockAdmin()
	name := uniqueName("sl-ls-") + strings.Repeat("x", 60) // longer than GET_LOCK allows: mapped
	_, holderID := holdUserLock(t, db.SQL, name)
	var user string
	if err := db.SQL.QueryRowContext(ctx, "SELECT SUBSTRING_INDEX(CURRENT_USER(), '@', 1)").Scan(&user); err != nil {
		t.Fatal(err)
	}

	// IS_USED_LOCK answers on every server.
	e, found, err := admin.SessionLock(ctx, name)
	if err != nil || !found {
		t.Fatalf("SessionLock = %+v, %v, %v", e, found, err)
	}
	if e.Name != name || e.State != dialects.StateHeld || e.Source != SourceIsUsedLock || e.Holder.SessionID != holderID || e.Holder.User != user || !strings.Contains(e.Holder.Client, ":") {
		t.Errorf("SessionLock entry %+v, holder %+v (want session %s of %s)", e, e.Holder, holderID, user)
	}
	if _, found, err := admin.SessionLock(ctx, uniqueName("sl-free-")); err != nil || found {
		t.Errorf("a free lock: found=%v err=%v", found, err)
	}

	listAndCheck := func(t *testing.T, source string) {
		entries, err := admin.SessionLocks(ctx, []string{name})
		if err != nil {
			t.Fatal(err)
		}
		var mine []dialects.LockEntry
		for _, e := range entries {
			if e.Holder.SessionID == holderID {
				mine = append(mine, e)
			}
		}
		if len(mine) != 1 || mine[0].Name != name || mine[0].State != dialects.StateHeld || mine[0].Source != source || mine[0].Holder.User != user {
			t.Errorf("SessionLocks entries of session %s: %+v", holderID, mine)
		}
	}
	perfSchema, plugin := serverListing(t, db.SQL)
	switch {
	case perfSchema:
		listAndCheck(t, SourcePerformanceSchema)
	case plugin:
		listAndCheck(t, SourceMetadataLockInfo)
	default:
		_, err := admin.SessionLocks(ctx, nil)
		var unavailable *dialects.ListingUnavailableError
		if !errors.As(err, &unavailable) || !errors.Is(err, dialects.ErrUnsupported) {
			t.Fatalf("a server without performance_schema or metadata_lock_info: %v", err)
		}
		if db.Info.Product == dialects.ProductMariaDB {
			// With performance_schema on (scripts/test.sh starts MariaDB
			// so) the instrument is off by default and is the first remedy.
			want := "INSTALL SONAME 'metadata_lock_info'"
			var ps int
			if err := db.SQL.QueryRowContext(ctx, "SELECT @@performance_schema").Scan(&ps); err != nil {
				t.Fatal(err)
			}
			if ps == 1 {
				want = "UPDATE performance_schema.setup_instruments SET ENABLED = 'YES', TIMED = 'YES' WHERE NAME = 'wait/lock/metadata/sql/mdl', or " + want
			}
			if unavailable.Enable != want {
				t.Errorf("MariaDB remedy %q, want %q", unavailable.Enable, want)
			}
		}
		// Where the plugin can be installed, the listing works with it;
		// it is uninstalled again at once.
		if db.Info.Product == dialects.ProductMariaDB {
			if _, err := db.SQL.ExecContext(ctx, "INSTALL SONAME 'metadata_lock_info'"); err != nil {
				t.Fatalf("install metadata_lock_info: %v", err)
			}
			uninstalled := false
			uninstall := func() {
				if !uninstalled {
					uninstalled = true
					if _, err := db.SQL.Exec("UNINSTALL SONAME 'metadata_lock_info'"); err != nil {
						t.Errorf("uninstall metadata_lock_info: %v", err)
					}
				}
			}
			t.Cleanup(uninstall)
			listAndCheck(t, SourceMetadataLockInfo)
			uninstall()
		}
	}

	if err := admin.Kill(ctx, holderID); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, found, err := admin.SessionLock(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if !found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the lock is still held 5s after KILL")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// perfSchemaServer simulates a MySQL 8 server whose performance_schema
// lists a granted and a pending user lock.
type perfSchemaServer struct{ locks [][]any }

func (s *perfSchemaServer) Handle(_ *fakesql.Session, query string, _ []driver.NamedValue) (fakesql.Response, error) {
	switch query {
	case listingProbeSQL:
		return fakesql.Response{Columns: []string{"ps", "mdl", "plugin"}, Rows: [][]any{{int64(1), int64(1), int64(0)}}}, nil
	case instrumentSQL:
		return fakesql.Response{Columns: []string{"ENABLED"}, Rows: [][]any{{"YES"}}}, nil
	case perfSchemaLocksSQL:
		return fakesql.Response{Columns: []string{"OBJECT_NAME", "LOCK_STATUS", "PROCESSLIST_ID", "USER", "HOST", "PROGRAM", "NOW"}, Rows: s.locks}, nil
	}
	return fakesql.Response{}, errors.New("unexpected statement: " + query)
}

func (s *perfSchemaServer) Close(*fakesql.Session) {}

func TestSessionLocksFromPerformanceSchema(t *testing.T) {
	now := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC).UnixMilli()
	long := "nightly-" + strings.Repeat("r", 70)
	srv := &perfSchemaServer{locks: [][]any{
		{LockName("jobs", long), "GRANTED", int64(42), "app", "10.0.0.7", "report-runner", now},
		{LockName("jobs", long), "PENDING", int64(43), "app", "10.0.0.8", "", now},
		{"atlas_migrate_execute", "GRANTED", int64(44), "etl", "10.0.0.9", "", now},
		{"jobs/cleanup", "GRANTED", int64(45), "app", "10.0.0.7", "", now},
		{"staging/cleanup", "GRANTED", int64(46), "app", "10.0.0.7", "", now},
	}}
	raw, _ := fakesql.Open(srv)
	defer raw.Close()
	admin := &LockAdmin{DB: raw, Info: dialects.Info{Product: dialects.ProductMySQL, Version: "8.0.36"}, Database: "jobs"}
	entries, err := admin.SessionLocks(context.Background(), []string{long})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 5 {
		t.Fatalf("entries: %+v", entries)
	}
	want := []struct {
		name, key, state, session, app string
	}{
		{long, LockName("jobs", long), "held", "42", "report-runner"},
		{long, LockName("jobs", long), "waiting", "43", ""},
		{"", "atlas_migrate_execute", "held", "44", ""}, // another tool's: key only
		{"cleanup", "jobs/cleanup", "held", "45", ""},   // this database's, reversed
		{"", "staging/cleanup", "held", "46", ""},       // another database's: key only
	}
	for i, w := range want {
		e := entries[i]
		if e.Name != w.name || e.Key != w.key || string(e.State) != w.state || e.Holder.SessionID != w.session || e.Holder.Application != w.app || e.Source != SourcePerformanceSchema || !e.DBNow.Equal(time.UnixMilli(now)) {
			t.Errorf("entry %d = %+v %+v, want %+v", i, e, e.Holder, w)
		}
	}
}

func TestListingUnavailableRemedies(t *testing.T) {
	cases := []struct {
		info           dialects.Info
		ps, mdlTable   bool
		reason, enable string
	}{
		{dialects.Info{Product: dialects.ProductMariaDB, Version: "10.11.6"}, false, true, "performance_schema (OFF)", "INSTALL SONAME 'metadata_lock_info'"},
		{dialects.Info{Product: dialects.ProductMariaDB, Version: "10.4.30"}, true, false, "no performance_schema.metadata_locks", "INSTALL SONAME 'metadata_lock_info'"},
		{dialects.Info{Product: dialects.ProductMariaDB, Version: "10.11.6"}, true, true, "instrument wait/lock/metadata/sql/mdl is disabled", "UPDATE performance_schema.setup_instruments SET ENABLED = 'YES', TIMED = 'YES' WHERE NAME = 'wait/lock/metadata/sql/mdl', or INSTALL SONAME 'metadata_lock_info'"},
		{dialects.Info{Product: dialects.ProductMySQL, Version: "8.0.36"}, false, true, "performance_schema is OFF", "start the server with performance_schema=ON"},
		{dialects.Info{Product: dialects.ProductMySQL, Version: "5.7.44"}, true, true, "disabled (the default before MySQL 8.0)", "UPDATE performance_schema.setup_instruments SET ENABLED = 'YES', TIMED = 'YES' WHERE NAME = 'wait/lock/metadata/sql/mdl'"},
	}
	for _, tc := range cases {
		a := &LockAdmin{Info: tc.info}
		var u *dialects.ListingUnavailableError
		if err := a.unavailable(tc.ps, tc.mdlTable); !errors.As(err, &u) || !strings.Contains(u.Reason, tc.reason) || u.Enable != tc.enable {
			t.Errorf("%s %s ps=%v: %v", tc.info.Product, tc.info.Version, tc.ps, err)
		}
	}
}
