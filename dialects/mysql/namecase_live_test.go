package mysql

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
)

// TestShedlockDDLCaseLive: on ShedLock's own DDL with utf8mb4 (no
// collation given, so the server's default, utf8mb4_general_ci on
// MariaDB), Nightly and nightly are one lock. selfcheck's names.case says
// so with the column's collation and the operator's ALTER TABLE, and the
// name checks that find two names being one lock name the collation
// instead of telling developers to bind parameters. Once the ALTER runs,
// they are two locks and every name check passes.
func TestShedlockDDLCaseLive(t *testing.T) {
	d := openDetected(t)
	table := uniqueName("shedlock_")
	ddl := "CREATE TABLE " + table + " (name VARCHAR(64) NOT NULL, lock_until TIMESTAMP(3) NOT NULL, " +
		"locked_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name)) DEFAULT CHARSET=utf8mb4"
	if _, err := d.SQL.ExecContext(testContext(t), ddl); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = d.SQL.ExecContext(ctx, "DROP TABLE IF EXISTS "+table)
	})
	var collation string
	if err := d.SQL.QueryRowContext(testContext(t), "SELECT COLLATION_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = 'name'", table).Scan(&collation); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(collation, "_ci") {
		t.Fatalf("the server's default utf8mb4 collation is %s; this test needs a case-insensitive one", collation)
	}
	tables := []dialects.Table{{Preset: dialects.PresetShedlock, Name: table}}
	ids := []string{"table.names.case", "table.names.distinct", "table.names.special"}
	res := dialecttest.Results(t, d, dialecttest.Options{Strategies: []dialects.Strategy{dialects.StrategyTable}, Tables: tables}, ids...)
	alter := "ALTER TABLE " + table + " MODIFY name varchar(64) CHARACTER SET utf8mb4 COLLATE " + NewBuilder(d.Info).Collation + " NOT NULL"
	c := res["table.names.case"]
	if c.Status != checks.StatusFail || !strings.Contains(c.Detail, "one lock") || !strings.Contains(c.Detail, "collation "+collation) ||
		!strings.Contains(c.Remedy, alter) || strings.Contains(c.Remedy, "bind lock names") {
		t.Errorf("names.case on %s = %+v; want a failure naming the collation, with the remedy %q", collation, c, alter)
	}
	for _, id := range ids[1:] {
		r := res[id]
		if r.Status != checks.StatusFail || !strings.Contains(r.Remedy, "collation "+collation) || strings.Contains(r.Remedy, "bind lock names") {
			t.Errorf("%s on %s = %+v; want a failure whose remedy is the collation's", id, collation, r)
		}
	}
	if _, err := d.SQL.ExecContext(testContext(t), alter); err != nil {
		t.Fatalf("the remedy %q: %v", alter, err)
	}
	for id, r := range dialecttest.Results(t, d, dialecttest.Options{Strategies: []dialects.Strategy{dialects.StrategyTable}, Tables: tables}, ids...) {
		if r.Status != checks.StatusPass {
			t.Errorf("%s after the remedy = %+v; want pass", id, r)
		}
		if id == "table.names.case" && !strings.Contains(r.Detail, "two locks") {
			t.Errorf("names.case after the remedy: %q", r.Detail)
		}
	}
}

// TestSchedlockDDLCaseLive: on the tables schedlock creates, names that
// differ only in case are two locks.
func TestSchedlockDDLCaseLive(t *testing.T) {
	d := openDetected(t)
	var tables []dialects.Table
	for _, p := range dialects.Presets() {
		tables = append(tables, dialects.Table{Preset: p, Name: uniqueName("sl_case_")})
	}
	res := dialecttest.Results(t, d, dialecttest.Options{Strategies: []dialects.Strategy{dialects.StrategyTable}, Tables: tables}, "table.schedlock.names.case", "table.shedlock.names.case", "table.sys_sched_lock.names.case")
	if len(res) != 3 {
		t.Fatalf("results %+v", res)
	}
	for id, r := range res {
		if r.Status != checks.StatusPass || !strings.Contains(r.Detail, "two locks") || !strings.Contains(r.Detail, NewBuilder(d.Info).Collation) {
			t.Errorf("%s = %+v; want two locks under %s", id, r, NewBuilder(d.Info).Collation)
		}
	}
}

// TestSessionNameCaseLive: MariaDB's GET_LOCK keeps Nightly and nightly
// apart (although its documentation says lock names are case-insensitive);
// MySQL lower-cases user-lock names, so there names.case warns that they
// are one lock.
func TestSessionNameCaseLive(t *testing.T) {
	d := openDetected(t)
	r := dialecttest.Results(t, d, dialecttest.Options{Strategies: []dialects.Strategy{dialects.StrategySession}}, "session.names.case")["session.names.case"]
	switch {
	case d.Info.Product == dialects.ProductMariaDB:
		if r.Status != checks.StatusPass || !strings.Contains(r.Detail, "two locks") {
			t.Errorf("session.names.case on %s = %+v; want two locks", d.Info.Version, r)
		}
	case d.Info.Product == dialects.ProductMySQL:
		if r.Status != checks.StatusWarn || !strings.Contains(r.Detail, "one lock") {
			t.Errorf("session.names.case on MySQL %s = %+v; want a warning: one lock", d.Info.Version, r)
		}
	}
}

// TestLatin1DDLCharsetLive: on ShedLock's DDL in a latin1 table (a server
// whose default character set is latin1, and no CHARACTER SET in the DDL),
// a multi-byte name cannot be stored: acquiring it is a CharsetError
// (ErrInvalid) naming the column, nothing is written, and selfcheck's name
// checks give the operator's ALTER TABLE to a Unicode character set, not
// the developer's remedy. Once the ALTER runs, every name check passes.
func TestLatin1DDLCharsetLive(t *testing.T) {
	d := openDetected(t)
	table := uniqueName("shedlock_latin1_")
	ddl := "CREATE TABLE " + table + " (name VARCHAR(64) NOT NULL, lock_until TIMESTAMP(3) NOT NULL, " +
		"locked_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name)) DEFAULT CHARSET=latin1"
	if _, err := d.SQL.ExecContext(testContext(t), ddl); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = d.SQL.ExecContext(ctx, "DROP TABLE IF EXISTS "+table)
	})
	tables := []dialects.Table{{Preset: dialects.PresetShedlock, Name: table}}
	ids := []string{"table.names.special", "table.names.length"}
	res := dialecttest.Results(t, d, dialecttest.Options{Strategies: []dialects.Strategy{dialects.StrategyTable}, Tables: tables}, ids...)
	alter := "ALTER TABLE " + table + " MODIFY name varchar(64) CHARACTER SET utf8mb4 COLLATE " + NewBuilder(d.Info).Collation + " NOT NULL"
	for _, id := range ids {
		r := res[id]
		if r.Status != checks.StatusFail || !strings.Contains(r.Remedy, "character set") || !strings.Contains(r.Remedy, alter) || strings.Contains(r.Remedy, "bind lock names") {
			t.Errorf("%s on a latin1 table = %+v; want a failure whose remedy is %q", id, r, alter)
		}
	}
	var rows int
	if err := d.SQL.QueryRowContext(testContext(t), "SELECT COUNT(*) FROM "+table+" WHERE name LIKE '%?%'").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 0 {
		t.Errorf("%d rows with a replaced character were written", rows)
	}
	if _, err := d.SQL.ExecContext(testContext(t), alter); err != nil {
		t.Fatalf("the remedy %q: %v", alter, err)
	}
	for id, r := range dialecttest.Results(t, d, dialecttest.Options{Strategies: []dialects.Strategy{dialects.StrategyTable}, Tables: tables}, ids...) {
		if r.Status != checks.StatusPass {
			t.Errorf("%s after the remedy = %+v; want pass", id, r)
		}
	}
}
