package postgres

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
)

// TestCaseInsensitiveCollationLive: a ShedLock table whose name column has
// a nondeterministic (case-insensitive) ICU collation makes Nightly and
// nightly one lock. selfcheck's names.case says so with the collation and
// the operator's ALTER TABLE to a deterministic one; after it they are two
// locks.
func TestCaseInsensitiveCollationLive(t *testing.T) {
	db := liveDB(t)
	ctx := testCtx(t)
	coll, table := unique("ci_"), unique("shedlock_")
	for _, q := range []string{
		"CREATE COLLATION " + coll + " (provider = icu, locale = 'und-u-ks-level2', deterministic = false)",
		"CREATE TABLE " + table + " (name VARCHAR(64) COLLATE " + coll + " NOT NULL PRIMARY KEY, lock_until TIMESTAMP NOT NULL, locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL)",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = db.ExecContext(ctx, "DROP TABLE IF EXISTS "+table)
		_, _ = db.ExecContext(ctx, "DROP COLLATION IF EXISTS "+coll)
	})
	d, err := New(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	tables := []dialects.Table{{Preset: dialects.PresetShedlock, Name: table}}
	alter := "ALTER TABLE " + table + ` ALTER COLUMN name TYPE character varying(64) COLLATE "C"`
	c := dialecttest.Results(t, d, dialecttest.Options{Strategies: []dialects.Strategy{dialects.StrategyTable}, Tables: tables}, "table.names.case")["table.names.case"]
	if c.Status != checks.StatusFail || !strings.Contains(c.Detail, "collation "+coll+" (nondeterministic)") || !strings.Contains(c.Remedy, alter) {
		t.Fatalf("names.case on a nondeterministic collation = %+v; want a failure naming it, with the remedy %q", c, alter)
	}
	if _, err := db.ExecContext(ctx, alter); err != nil {
		t.Fatalf("the remedy %q: %v", alter, err)
	}
	c = dialecttest.Results(t, d, dialecttest.Options{Strategies: []dialects.Strategy{dialects.StrategyTable}, Tables: tables}, "table.names.case")["table.names.case"]
	if c.Status != checks.StatusPass || !strings.Contains(c.Detail, "two locks") || !strings.Contains(c.Detail, "collation C") {
		t.Fatalf("names.case after the remedy = %+v; want two locks under C", c)
	}
}

// TestSchedlockDDLCaseLive: on the tables schedlock creates (the
// database's default, deterministic collation), names that differ only in
// case are two locks, as they are for the session strategy's advisory
// keys (SHA-256 of the name's bytes).
func TestSchedlockDDLCaseLive(t *testing.T) {
	d, err := New(testCtx(t), liveDB(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var tables []dialects.Table
	for _, p := range dialects.Presets() {
		tables = append(tables, dialects.Table{Preset: p, Name: unique("sl_case_")})
	}
	res := dialecttest.Results(t, d, dialecttest.Options{Strategies: []dialects.Strategy{dialects.StrategyTable}, Tables: tables}, "table.schedlock.names.case", "table.shedlock.names.case", "table.sys_sched_lock.names.case")
	if len(res) != 3 {
		t.Fatalf("results %+v", res)
	}
	for id, r := range res {
		if r.Status != checks.StatusPass || !strings.Contains(r.Detail, "two locks") || !strings.Contains(r.Detail, "collation default (") {
			t.Errorf("%s = %+v; want two locks under the database's default collation", id, r)
		}
	}
}

// TestSessionNameCaseLive: advisory keys are hashes of the name's bytes,
// so Nightly and nightly are two locks.
func TestSessionNameCaseLive(t *testing.T) {
	d, err := New(testCtx(t), liveDB(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := dialecttest.Results(t, d, dialecttest.Options{Strategies: []dialects.Strategy{dialects.StrategySession}}, "session.names.case")["session.names.case"]
	if r.Status != checks.StatusPass || !strings.Contains(r.Detail, "two locks") {
		t.Errorf("session.names.case = %+v; want two locks", r)
	}
}
