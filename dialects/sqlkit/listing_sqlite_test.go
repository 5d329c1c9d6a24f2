package sqlkit_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlite"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// openSQLiteAdmin opens a fresh SQLite file as a detected sqlkit.DB.
func openSQLiteAdmin(t *testing.T) *sqlkit.DB {
	t.Helper()
	raw, err := sql.Open(sqlite.DriverName, sqlite.DSN(filepath.Join(t.TempDir(), "locks.db")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = raw.Close() })
	db, err := sqlite.New(context.Background(), raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	return db.DB
}

func execAll(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// shedlockSQLite is ShedLock's table, with times written as ShedLock does
// with usingDbTime(): UTC wall-clock text.
const shedlockSQLite = `CREATE TABLE shedlock (name VARCHAR(64) NOT NULL PRIMARY KEY, lock_until TIMESTAMP NOT NULL, locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL)`

// liquibaseSQLite is the table Liquibase creates on SQLite.
const liquibaseSQLite = `CREATE TABLE DATABASECHANGELOGLOCK (ID INTEGER NOT NULL, LOCKED BOOLEAN NOT NULL, LOCKGRANTED DATETIME, LOCKEDBY VARCHAR(255), CONSTRAINT PK_DATABASECHANGELOGLOCK PRIMARY KEY (ID))`

func byName(ls []dialects.LockEntry) map[string]dialects.LockEntry {
	m := map[string]dialects.LockEntry{}
	for _, e := range ls {
		m[e.Name] = e
	}
	return m
}

func TestListLocksSQLiteNoTables(t *testing.T) {
	db := openSQLiteAdmin(t)
	l, err := db.ListLocks(context.Background(), dialects.ListOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if l.Locks == nil || len(l.Locks) != 0 || len(l.Tables) != 0 || len(l.Notes) != 0 {
		t.Errorf("empty database: %+v", l)
	}
}

func TestListLocksSQLiteShedLockAndLiquibase(t *testing.T) {
	ctx := context.Background()
	db := openSQLiteAdmin(t)
	execAll(t, db.SQL,
		shedlockSQLite,
		`INSERT INTO shedlock VALUES ('held-job', strftime('%Y-%m-%d %H:%M:%f', 'now', '+10 minutes'), strftime('%Y-%m-%d %H:%M:%f', 'now', '-1 minutes'), 'host-a')`,
		`INSERT INTO shedlock VALUES ('dead-job', strftime('%Y-%m-%d %H:%M:%f', 'now', '-5 minutes'), strftime('%Y-%m-%d %H:%M:%f', 'now', '-35 minutes'), 'host-b')`,
		`CREATE TABLE sys_sched_lock (lock_name VARCHAR(64) PRIMARY KEY, lock_owner VARCHAR(255), acquire_time TIMESTAMP, expire_time TIMESTAMP)`,
		`INSERT INTO sys_sched_lock VALUES ('idle-job', NULL, NULL, strftime('%Y-%m-%d %H:%M:%f', 'now', '-1 days'))`,
		liquibaseSQLite,
		`INSERT INTO DATABASECHANGELOGLOCK VALUES (1, 1, CURRENT_TIMESTAMP, 'build-7 (10.0.0.5)')`,
	)

	l, err := db.ListLocks(ctx, dialects.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for _, tb := range l.Tables {
		tables = append(tables, tb.Preset+":"+tb.Name)
	}
	if got := strings.Join(tables, " "); got != "shedlock:shedlock sys_sched_lock:sys_sched_lock liquibase:DATABASECHANGELOGLOCK" {
		t.Errorf("tables found: %s", got)
	}
	got := byName(l.Locks)
	if len(l.Locks) != 3 {
		t.Errorf("want held-job, dead-job and liquibase (the free idle-job hidden), got %+v", l.Locks)
	}
	held := got["held-job"]
	if held.State != dialects.StateHeld || held.Owner != "host-a" || held.Source != "shedlock" || held.Strategy != dialects.StrategyTable {
		t.Errorf("held-job: %+v", held)
	}
	if d := held.Until.Sub(held.DBNow); d < 9*time.Minute || d > 10*time.Minute {
		t.Errorf("held-job lease ends in %s, want about 10m", d)
	}
	if a := held.Age(); a < 59*time.Second || a > 2*time.Minute {
		t.Errorf("held-job age %s, want about 1m", a)
	}
	if dead := got["dead-job"]; dead.State != dialects.StateExpired || dead.Owner != "host-b" {
		t.Errorf("dead-job: %+v", dead)
	}
	if lb := got["liquibase"]; lb.State != dialects.StateHeld || lb.Owner != "build-7 (10.0.0.5)" || lb.Source != "DATABASECHANGELOGLOCK" || lb.LockedAt.IsZero() {
		t.Errorf("liquibase: %+v", lb)
	}
	if len(l.Notes) != 1 || !strings.Contains(l.Notes[0], "released and expired rows both show as expired") {
		t.Errorf("notes: %q", l.Notes)
	}

	all, err := db.ListLocks(ctx, dialects.ListOptions{All: true, Names: []string{"*-job"}})
	if err != nil {
		t.Fatal(err)
	}
	if idle := byName(all.Locks)["idle-job"]; idle.State != dialects.StateFree || len(all.Locks) != 3 {
		t.Errorf("--all --name '*-job': %+v", all.Locks)
	}
	if sessionsOnly, err := db.ListLocks(ctx, dialects.ListOptions{Strategy: dialects.StrategySession}); err != nil || len(sessionsOnly.Locks) != 0 || len(sessionsOnly.Tables) != 0 {
		t.Errorf("--strategy session on SQLite: %+v, %v", sessionsOnly, err)
	}
	if _, err := db.ListLocks(ctx, dialects.ListOptions{Strategy: "advisory"}); !errors.Is(err, dialects.ErrInvalid) {
		t.Errorf("unknown strategy: %v", err)
	}
	expired, err := db.ListLocks(ctx, dialects.ListOptions{States: []dialects.LockState{dialects.StateExpired}})
	if err != nil {
		t.Fatal(err)
	}
	if len(expired.Locks) != 1 || expired.Locks[0].Name != "dead-job" {
		t.Errorf("--state expired: %+v", expired.Locks)
	}
}

func TestListLocksSQLiteNativeTable(t *testing.T) {
	ctx := context.Background()
	db := openSQLiteAdmin(t)
	tl, err := db.TableLocker(dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	lease, err := tl.Acquire(ctx, "nightly", dialects.Options{AtMost: time.Hour, Owner: "worker-1"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := db.ListLocks(ctx, dialects.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	token, _ := lease.Token()
	if len(l.Locks) != 1 || l.Locks[0].Name != "nightly" || l.Locks[0].State != dialects.StateHeld || !l.Locks[0].HasToken || l.Locks[0].Token != token || l.Locks[0].Preset != dialects.PresetSchedlock {
		t.Fatalf("native table listing: %+v", l.Locks)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	f, err := db.FindLock(ctx, "nightly", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Locks) != 1 || f.Locks[0].State != dialects.StateExpired || f.Locks[0].Owner != "worker-1" {
		t.Errorf("after release, FindLock = %+v", f.Locks)
	}
	if f, err := db.FindLock(ctx, "other", nil); err != nil || len(f.Locks) != 0 {
		t.Errorf("FindLock(other) = %+v, %v", f, err)
	}
}

func TestListLocksSQLiteShapes(t *testing.T) {
	ctx := context.Background()
	db := openSQLiteAdmin(t)
	execAll(t, db.SQL,
		`CREATE TABLE shedlock (id INTEGER PRIMARY KEY, name TEXT)`,
		`CREATE TABLE job_lock (lock_name TEXT PRIMARY KEY, lock_owner TEXT, acquire_time TEXT, expire_time TEXT)`,
	)
	// Found by name but of another shape: skipped, with a note.
	l, err := db.ListLocks(ctx, dialects.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Tables) != 0 || len(l.Notes) != 1 || !strings.Contains(l.Notes[0], "skipped table shedlock is not a shedlock table") || !strings.Contains(l.Notes[0], "missing lock_until, locked_at, locked_by") {
		t.Errorf("wrong-shaped known table: tables %v, notes %q", l.Tables, l.Notes)
	}
	// Given: an error that says which columns were expected.
	_, err = db.ListLocks(ctx, dialects.ListOptions{Tables: []dialects.Table{{Name: "shedlock"}}})
	var shape *dialects.ShapeError
	if !errors.As(err, &shape) || !errors.Is(err, dialects.ErrInvalid) || !strings.Contains(err.Error(), "expected columns name, lock_until, locked_at, locked_by") {
		t.Errorf("--table shedlock of the wrong shape: %v", err)
	}
	_, err = db.ListLocks(ctx, dialects.ListOptions{Tables: []dialects.Table{{Name: "job_lock", Preset: dialects.PresetLiquibase}}})
	if !errors.As(err, &shape) || !strings.Contains(err.Error(), "missing ID, LOCKED, LOCKGRANTED, LOCKEDBY") {
		t.Errorf("--table job_lock --preset liquibase: %v", err)
	}
	// A table of unknown name: the preset comes from its columns.
	l, err = db.ListLocks(ctx, dialects.ListOptions{Tables: []dialects.Table{{Name: "job_lock"}}})
	if err != nil || len(l.Tables) != 1 || l.Tables[0].Preset != dialects.PresetSysSchedLock {
		t.Errorf("--table job_lock: %+v, %v", l, err)
	}
	_, err = db.ListLocks(ctx, dialects.ListOptions{Tables: []dialects.Table{{Name: "no_such_table"}}})
	if !errors.Is(err, dialects.ErrNoTable) || !strings.Contains(err.Error(), "table no_such_table does not exist") {
		t.Errorf("missing table: %v", err)
	}
	_, err = db.ListLocks(ctx, dialects.ListOptions{Names: []string{"[bad"}})
	if !errors.Is(err, dialects.ErrInvalid) {
		t.Errorf("bad glob: %v", err)
	}
}

func TestLiquibaseSQLiteGuardedRelease(t *testing.T) {
	ctx := context.Background()
	db := openSQLiteAdmin(t)
	execAll(t, db.SQL, liquibaseSQLite, `INSERT INTO DATABASECHANGELOGLOCK VALUES (1, 1, '2024-05-01 10:00:00.000', 'build-7 (10.0.0.5)')`)
	lb, err := db.Liquibase("")
	if err != nil {
		t.Fatal(err)
	}
	row, found, err := lb.Inspect(ctx)
	if err != nil || !found || !row.Locked || row.Owner != "build-7 (10.0.0.5)" || !row.LockedAt.Equal(time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("Inspect = %+v, %v, %v", row, found, err)
	}
	if row.DBNow.Before(row.LockedAt) {
		t.Errorf("database now %s is before LOCKGRANTED", row.DBNow)
	}
	changed, err := lb.Release(ctx, "build-8 (10.0.0.6)")
	if err != nil || changed {
		t.Fatalf("release by another owner = %v, %v", changed, err)
	}
	if row, _, _ := lb.Inspect(ctx); !row.Locked || row.Owner != "build-7 (10.0.0.5)" {
		t.Fatalf("another owner's release changed the row: %+v", row)
	}
	changed, err = lb.Release(ctx, "build-7 (10.0.0.5)")
	if err != nil || !changed {
		t.Fatalf("release by the owner = %v, %v", changed, err)
	}
	var locked int
	var granted, by sql.NullString
	if err := db.SQL.QueryRow(`SELECT LOCKED, LOCKGRANTED, LOCKEDBY FROM DATABASECHANGELOGLOCK WHERE ID = 1`).Scan(&locked, &granted, &by); err != nil {
		t.Fatal(err)
	}
	if locked != 0 || granted.Valid || by.Valid {
		t.Errorf("after release: LOCKED=%d LOCKGRANTED=%v LOCKEDBY=%v", locked, granted, by)
	}
	if changed, err := lb.ForceRelease(ctx); err != nil || changed {
		t.Errorf("force release of a free lock = %v, %v", changed, err)
	}
	execAll(t, db.SQL, `UPDATE DATABASECHANGELOGLOCK SET LOCKED = 1, LOCKEDBY = 'x' WHERE ID = 1`)
	if changed, err := lb.ForceRelease(ctx); err != nil || !changed {
		t.Errorf("force release = %v, %v", changed, err)
	}
	if _, err := db.Liquibase("bad name"); !errors.Is(err, dialects.ErrInvalid) {
		t.Errorf("bad table name: %v", err)
	}
}
