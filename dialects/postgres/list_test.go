package postgres

import (
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// schemaDB creates a schema of its own for the test and opens the live
// server with search_path set to it, so the known lock table names
// (shedlock, databasechangeloglock, …) do not meet other tests' tables.
// The schema is dropped at the end.
func schemaDB(t *testing.T) (*Backend, string) {
	t.Helper()
	admin := liveDB(t)
	schema := unique("sl_ls_")
	if _, err := admin.ExecContext(testCtx(t), "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec("DROP SCHEMA " + schema + " CASCADE") })
	sep := "?"
	if strings.Contains(liveDSN(t), "?") {
		sep = "&"
	}
	raw, err := sql.Open(DriverName, liveDSN(t)+sep+"search_path="+schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = raw.Close() })
	db, err := New(testCtx(t), raw, nil)
	if err != nil {
		t.Fatalf("open the live server: %v", err)
	}
	return db, schema
}

func mustExec(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.ExecContext(testCtx(t), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// ShedLock's PostgreSQL table (README) and Liquibase's lock table as
// Liquibase creates them.
const (
	shedlockDDL  = `CREATE TABLE shedlock (name VARCHAR(64) NOT NULL, lock_until TIMESTAMP NOT NULL, locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))`
	liquibaseDDL = `CREATE TABLE databasechangeloglock (id INTEGER NOT NULL, locked BOOLEAN NOT NULL, lockgranted TIMESTAMP WITHOUT TIME ZONE, lockedby VARCHAR(255), CONSTRAINT databasechangeloglock_pkey PRIMARY KEY (id))`
)

func TestLockAdminLiveTablesShedLockAndLiquibase(t *testing.T) {
	ctx := testCtx(t)
	db, _ := schemaDB(t)
	// Filled the way ShedLock's usingDbTime() fills it: UTC wall clock.
	mustExec(t, db.SQL,
		shedlockDDL,
		`INSERT INTO shedlock VALUES ('held-job', timezone('utc', CURRENT_TIMESTAMP) + interval '10 minutes', timezone('utc', CURRENT_TIMESTAMP) - interval '1 minute', 'host-a')`,
		`INSERT INTO shedlock VALUES ('dead-job', timezone('utc', CURRENT_TIMESTAMP) - interval '5 minutes', timezone('utc', CURRENT_TIMESTAMP) - interval '35 minutes', 'host-b')`,
		liquibaseDDL,
		`INSERT INTO databasechangeloglock VALUES (1, TRUE, NOW(), 'build-7 (10.0.0.5)')`,
		`CREATE TABLE unrelated (id integer)`,
	)
	tables, err := db.LockAdmin().LockTables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []dialects.Table{{Preset: dialects.PresetShedlock, Name: "shedlock"}, {Preset: dialects.PresetLiquibase, Name: "databasechangeloglock"}}
	if len(tables) != 2 || tables[0] != want[0] || tables[1] != want[1] {
		t.Fatalf("LockTables = %+v, want %+v", tables, want)
	}

	l, err := db.ListLocks(ctx, dialects.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]dialects.LockEntry{}
	for _, e := range l.Locks {
		if e.Strategy == dialects.StrategyTable {
			got[e.Name] = e
		}
	}
	if held := got["held-job"]; held.State != dialects.StateHeld || held.Owner != "host-a" || held.Until.Sub(held.DBNow) < 9*time.Minute || held.Until.Sub(held.DBNow) > 10*time.Minute {
		t.Errorf("held-job: %+v", held)
	}
	if dead := got["dead-job"]; dead.State != dialects.StateExpired || dead.Owner != "host-b" || dead.DBNow.Sub(dead.Until) < 5*time.Minute-time.Second {
		t.Errorf("dead-job: %+v", dead)
	}
	lb := got["liquibase"]
	if lb.State != dialects.StateHeld || lb.Owner != "build-7 (10.0.0.5)" || lb.Source != "databasechangeloglock" {
		t.Errorf("liquibase: %+v", lb)
	}
	// LOCKGRANTED was written with now() in this session's time zone and
	// read back in it: it is the database's now of a moment ago.
	if age := lb.Age(); lb.LockedAt.IsZero() || age < 0 || age > time.Minute {
		t.Errorf("liquibase locked at %s, database now %s", lb.LockedAt, lb.DBNow)
	}

	// The guard: another owner's release changes nothing.
	liq, err := db.Liquibase("databasechangeloglock")
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
	var locked bool
	var granted sql.NullTime
	var by sql.NullString
	if err := db.SQL.QueryRowContext(ctx, "SELECT locked, lockgranted, lockedby FROM databasechangeloglock WHERE id = 1").Scan(&locked, &granted, &by); err != nil {
		t.Fatal(err)
	}
	if locked || granted.Valid || by.Valid {
		t.Errorf("after release: locked=%v lockgranted=%v lockedby=%v", locked, granted, by)
	}

	// ShedLock's held row, force-released: the lease ends now.
	tl, err := db.TableLocker(dialects.Table{Preset: dialects.PresetShedlock})
	if err != nil {
		t.Fatal(err)
	}
	if ended, err := tl.Expire(ctx, "held-job"); err != nil || !ended {
		t.Fatalf("Expire(held-job) = %v, %v", ended, err)
	}
	f, err := db.FindLock(ctx, "held-job", nil)
	if err != nil || len(f.Locks) != 1 || f.Locks[0].State != dialects.StateExpired {
		t.Errorf("after Expire: %+v, %v", f, err)
	}
}

// holdAdvisory takes the bigint advisory lock key on a connection of its
// own, named application, and returns the connection and its pid.
func holdAdvisory(t *testing.T, db *sql.DB, application string, key ...int64) (*sql.Conn, int64) {
	t.Helper()
	c := conn(t, db)
	if _, err := c.ExecContext(testCtx(t), "SET application_name = '"+application+"'"); err != nil {
		t.Fatal(err)
	}
	var ok bool
	var err error
	if len(key) == 1 {
		err = c.QueryRowContext(testCtx(t), "SELECT pg_try_advisory_lock($1::bigint)", key[0]).Scan(&ok)
	} else {
		err = c.QueryRowContext(testCtx(t), "SELECT pg_try_advisory_lock($1::integer, $2::integer)", key[0], key[1]).Scan(&ok)
	}
	if err != nil || !ok {
		t.Fatalf("take advisory lock %v: %v, %v", key, ok, err)
	}
	return c, backendPID(t, c)
}

func entriesFor(entries []dialects.LockEntry, key string) []dialects.LockEntry {
	var out []dialects.LockEntry
	for _, e := range entries {
		if e.Key == key {
			out = append(out, e)
		}
	}
	return out
}

func TestLockAdminLiveSessionLocks(t *testing.T) {
	ctx := testCtx(t)
	raw := liveDB(t)
	db, err := New(ctx, raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	admin := db.LockAdmin()
	name := unique("sl-ls-")
	key := Key(name)
	keyText := strconv.FormatInt(key, 10)
	var user string
	if err := raw.QueryRowContext(ctx, "SELECT current_user").Scan(&user); err != nil {
		t.Fatal(err)
	}

	_, holderPID := holdAdvisory(t, raw, "sl-holder", key)
	// A second session queues behind the holder.
	waiter := conn(t, raw)
	if _, err := waiter.ExecContext(ctx, "SET application_name = 'sl-waiter'"); err != nil {
		t.Fatal(err)
	}
	waiterPID := backendPID(t, waiter)
	waited := make(chan error, 1)
	go func() {
		_, err := waiter.ExecContext(ctx, "SELECT pg_advisory_lock($1::bigint)", key)
		waited <- err
	}()
	// A two-int4 key nobody can name.
	k1, k2 := int64(-7), int64(int32(key))
	_, pairPID := holdAdvisory(t, raw, "sl-pair", k1, k2)

	var entries []dialects.LockEntry
	deadline := time.Now().Add(10 * time.Second)
	for {
		entries, err = admin.SessionLocks(ctx, []string{name})
		if err != nil {
			t.Fatal(err)
		}
		if len(entriesFor(entries, keyText)) == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	mine := entriesFor(entries, keyText)
	if len(mine) != 2 {
		t.Fatalf("entries for key %s: %+v", keyText, mine)
	}
	held, wait := mine[0], mine[1]
	if held.Name != name || held.State != dialects.StateHeld || held.Source != SourcePgLocks || held.Strategy != dialects.StrategySession {
		t.Errorf("holder entry: %+v", held)
	}
	if h := held.Holder; h.SessionID != strconv.FormatInt(holderPID, 10) || h.User != user || h.Application != "sl-holder" || h.Client == "" || h.Since.IsZero() || h.Since.After(held.DBNow) {
		t.Errorf("holder session: %+v (database now %s)", h, held.DBNow)
	}
	if wait.Name != name || wait.State != dialects.StateWaiting || wait.Holder.SessionID != strconv.FormatInt(waiterPID, 10) || wait.Holder.Application != "sl-waiter" {
		t.Errorf("waiter entry: %+v %+v", wait, wait.Holder)
	}
	pair := entriesFor(entries, "-7,"+strconv.FormatInt(k2, 10))
	if len(pair) != 1 || pair[0].Name != "" || pair[0].Holder.SessionID != strconv.FormatInt(pairPID, 10) {
		t.Errorf("int4-pair entry: %+v", pair)
	}

	// Unlabelled, the key is listed without a name.
	unlabelled, err := admin.SessionLocks(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e := entriesFor(unlabelled, keyText); len(e) != 2 || e[0].Name != "" {
		t.Errorf("without names: %+v", e)
	}

	e, found, err := admin.SessionLock(ctx, name)
	if err != nil || !found || e.Holder.SessionID != strconv.FormatInt(holderPID, 10) || e.Name != name || e.Key != keyText {
		t.Fatalf("SessionLock = %+v, %v, %v", e, found, err)
	}
	// ListLocks with the exact name labels and filters.
	l, err := db.ListLocks(ctx, dialects.ListOptions{Names: []string{name}})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Locks) != 2 || l.Locks[0].State != dialects.StateHeld || l.Locks[1].State != dialects.StateWaiting {
		t.Errorf("ListLocks --name: %+v", l.Locks)
	}
	if l, err := db.ListLocks(ctx, dialects.ListOptions{Names: []string{name}, Strategy: dialects.StrategyTable}); err != nil || len(l.Locks) != 0 {
		t.Errorf("ListLocks --name --strategy table: %+v, %v", l, err)
	}

	// Terminating the holder hands the lock to the waiter.
	if err := admin.Kill(ctx, strconv.FormatInt(holderPID, 10)); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatalf("the waiter did not get the lock: %v", err)
	}
	e, found, err = admin.SessionLock(ctx, name)
	if err != nil || !found || e.Holder.SessionID != strconv.FormatInt(waiterPID, 10) {
		t.Fatalf("after the kill SessionLock = %+v, %v, %v", e, found, err)
	}
	if err := admin.Kill(ctx, strconv.FormatInt(waiterPID, 10)); err != nil {
		t.Fatal(err)
	}
	if _, found, err := admin.SessionLock(ctx, name); err != nil || found {
		t.Errorf("after both kills: found=%v err=%v", found, err)
	}
	if err := admin.Kill(ctx, "0"); !errors.Is(err, dialects.ErrInvalid) {
		t.Errorf("Kill(0) = %v", err)
	}
}

func TestLiquibaseInspectSQL(t *testing.T) {
	got := Builder{}.LiquibaseInspect("databasechangeloglock")
	want := "SELECT locked, floor(extract(epoch FROM lockgranted::timestamptz) * 1000)::bigint, lockedby, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint FROM databasechangeloglock WHERE id = 1"
	if got != want {
		t.Errorf("LiquibaseInspect =\n%s\nwant\n%s", got, want)
	}
}
