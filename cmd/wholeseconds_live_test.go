package cmd

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/internal/livetest"
)

// TestSelfcheckSysSchedLockWholeSecondsLive: on the published
// sys_sched_lock DDL, whose times are DATETIME (whole seconds), selfcheck's
// timing checks pass, and table.time-precision warns with the ALTER TABLE
// that gives the columns milliseconds — the lease ends are rounded up to the second instead
// of being cut short by the column, which let a second holder in early.
func TestSelfcheckSysSchedLockWholeSecondsLive(t *testing.T) {
	raw := livetest.DSN(t, "SCHEDLOCK_TEST_MYSQL_DSN")
	db, err := sql.Open("mysql", raw)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	table := "ssl_whole_" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "_")
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+table+" (lock_name VARCHAR(128) NOT NULL PRIMARY KEY, lock_owner VARCHAR(64) NOT NULL, "+
		"acquire_time DATETIME NOT NULL, expire_time DATETIME NOT NULL) DEFAULT CHARSET=utf8mb4"); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = db.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+table) }()
	r := runCmd(t, false, nil, "selfcheck", "--dsn", raw, "--preset", "sys_sched_lock", "--table", table,
		"--check", "table.refresh,table.refresh-lost,table.at-most,table.at-least,table.time-precision")
	if r.err != nil {
		t.Fatalf("selfcheck: %v\n%s%s", r.err, r.stdout, r.stderr)
	}
	for _, check := range []string{"table.refresh\t", "table.refresh-lost\t", "table.at-most\t", "table.at-least\t"} {
		if !strings.Contains(r.stdout, check) {
			t.Errorf("selfcheck did not run %s:\n%s", strings.TrimSpace(check), r.stdout)
		}
	}
	want := "table.time-precision\ttable\twarn\t"
	remedy := "ALTER TABLE " + table + " MODIFY acquire_time DATETIME(3) NOT NULL, MODIFY expire_time DATETIME(3) NOT NULL"
	if !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, remedy) {
		t.Errorf("selfcheck does not warn of the whole-second columns with %q:\n%s", remedy, r.stdout)
	}
}
