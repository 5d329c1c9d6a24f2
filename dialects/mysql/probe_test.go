package mysql

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/schedlock/schedlock/dialects"
)

// probeLive detects and probes the live server opened with tweak.
func probeLive(t *testing.T, tweak func(*mysql.Config), opts dialects.ProbeOptions) (*Backend, dialects.Capabilities) {
	t.Helper()
	db, err := New(testContext(t), openLive(t, tweak), nil)
	if err != nil {
		t.Fatalf("detect: %v", err)
	}
	caps, err := db.Probe(testContext(t), opts)
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	return db, caps
}

// probeTables lists the tables named like the probe's in the database.
func probeTables(t *testing.T, db *sql.DB) map[string]bool {
	t.Helper()
	rows, err := db.QueryContext(testContext(t), `SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'schedlock\_probe\_%'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	set := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		set[name] = true
	}
	return set
}

func TestProbeLive(t *testing.T) {
	admin := openLive(t, nil)
	before := probeTables(t, admin)
	db, caps := probeLive(t, nil, dialects.ProbeOptions{})
	info := db.Info

	if c := caps.SessionLocks; c.Status != dialects.StatusYes || !strings.HasPrefix(c.Detail, "proved:") {
		t.Errorf("session locks = %+v, want proved yes", c)
	}
	wantRowLocks := info.Product == dialects.ProductMariaDB && versionAtLeast(info.Version, 10, 6) ||
		info.Product == dialects.ProductMySQL && versionAtLeast(info.Version, 8, 0, 1)
	for name, c := range map[string]dialects.Capability{"skip_locked": caps.SkipLocked, "nowait": caps.NoWait} {
		if c.Supported != wantRowLocks || !strings.HasPrefix(c.Detail, "proved:") && wantRowLocks {
			t.Errorf("%s on %s %s = %+v, want supported=%v, proved", name, info.Product, info.Version, c, wantRowLocks)
		}
	}
	wantClaim := dialects.ClaimOptimistic
	if wantRowLocks {
		wantClaim = dialects.ClaimSkipLocked
	}
	if r := caps.Recommended; r.LockStrategy != dialects.StrategySession || r.ClaimStrategy != wantClaim {
		t.Errorf("recommended %s / %s, want session / %s", r.LockStrategy, r.ClaimStrategy, wantClaim)
	}

	var level string
	variable := "@@transaction_isolation"
	if err := admin.QueryRowContext(testContext(t), "SELECT "+variable).Scan(&level); err != nil {
		if err := admin.QueryRowContext(testContext(t), "SELECT @@tx_isolation").Scan(&level); err != nil {
			t.Fatal(err)
		}
	}
	if want := strings.ToLower(strings.ReplaceAll(level, "-", " ")); caps.Isolation.Detail != want {
		t.Errorf("isolation %q, server says %q", caps.Isolation.Detail, level)
	}

	// Lock listing must agree with the server's own state.
	var psOn int
	if err := admin.QueryRowContext(testContext(t), "SELECT @@performance_schema").Scan(&psOn); err != nil {
		t.Fatal(err)
	}
	var plugin string
	_ = admin.QueryRowContext(testContext(t), "SELECT PLUGIN_STATUS FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'METADATA_LOCK_INFO'").Scan(&plugin)
	if psOn == 0 && plugin != "ACTIVE" {
		c := caps.LockListing
		if c.Status != dialects.StatusNo || !strings.Contains(c.Remedy, "IS_USED_LOCK") {
			t.Errorf("lock_listing = %+v with performance_schema off and no plugin, want no with how to enable", c)
		}
		if info.Product == dialects.ProductMariaDB && !strings.Contains(c.Remedy, "INSTALL SONAME 'metadata_lock_info'") {
			t.Errorf("lock_listing remedy %q does not name the MariaDB plugin", c.Remedy)
		}
	}

	// root has every privilege.
	if c := caps.KillSessions; c.Status != dialects.StatusYes {
		t.Errorf("kill_sessions = %+v for root, want yes", c)
	}
	if len(caps.MissingPrivileges) != 0 {
		t.Errorf("root misses privileges: %+v", caps.MissingPrivileges)
	}
	if !caps.Clock.Measured || caps.Clock.Skew.Abs() >= time.Second {
		t.Errorf("clock %+v: want a measured skew under 1s on the same host", caps.Clock)
	}
	for name := range probeTables(t, admin) {
		if !before[name] {
			t.Errorf("probe table %s left behind", name)
		}
	}
}

func TestProbeLiveReadOnlyCreatesNothing(t *testing.T) {
	admin := openLive(t, nil)
	before := probeTables(t, admin)
	_, caps := probeLive(t, nil, dialects.ProbeOptions{ReadOnly: true})
	for name, c := range map[string]dialects.Capability{"skip_locked": caps.SkipLocked, "nowait": caps.NoWait} {
		if !strings.HasPrefix(c.Detail, "by version:") || !strings.HasSuffix(c.Detail, dialects.NotProbedReadOnly) {
			t.Errorf("%s = %+v, want judged by version, not probed", name, c)
		}
	}
	for name := range probeTables(t, admin) {
		if !before[name] {
			t.Errorf("read-only probe created %s", name)
		}
	}
}

// TestProbeLiveUnprivilegedUser probes as a fresh user with only SELECT on
// the test database: no CREATE, no KILL of others; both must be named with
// their GRANT, and SKIP LOCKED judged by version.
func TestProbeLiveUnprivilegedUser(t *testing.T) {
	admin := openLive(t, nil)
	ctx := testContext(t)
	cfg := liveConfig(t)
	user := uniqueName("sl_probe_")
	var host string
	if err := admin.QueryRowContext(ctx, "SELECT SUBSTRING_INDEX(CURRENT_USER(), '@', -1)").Scan(&host); err != nil {
		t.Fatal(err)
	}
	account := "'" + user + "'@'" + host + "'"
	for _, stmt := range []string{
		"CREATE USER " + account,
		"GRANT SELECT ON " + quoteIdent(cfg.DBName) + ".* TO " + account,
	} {
		if _, err := admin.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP USER "+account); err != nil {
			t.Errorf("drop user: %v", err)
		}
	})
	db, caps := probeLive(t, func(c *mysql.Config) { c.User, c.Passwd = user, "" }, dialects.ProbeOptions{})
	defer db.SQL.Close()

	if c := caps.KillSessions; c.Status != dialects.StatusNo || !strings.Contains(c.Remedy, "GRANT ") || !strings.Contains(c.Remedy, account) {
		t.Errorf("kill_sessions = %+v, want no with the GRANT for %s", c, account)
	}
	if c := caps.SkipLocked; !strings.Contains(c.Detail, "cannot create the probe table") {
		t.Errorf("skip_locked = %+v, want judged by version", c)
	}
	grants := map[string]string{}
	for _, p := range caps.MissingPrivileges {
		grants[p.Privilege] = p.Grant
	}
	create := "CREATE on " + quoteIdent(cfg.DBName)
	if g := grants[create]; g != "GRANT CREATE ON "+quoteIdent(cfg.DBName)+".* TO "+account {
		t.Errorf("grant for %s = %q (all: %+v)", create, g, caps.MissingPrivileges)
	}
	if len(caps.MissingPrivileges) != 2 {
		t.Errorf("missing privileges %+v, want CREATE and the KILL privilege", caps.MissingPrivileges)
	}
	if caps.SessionLocks.Status != dialects.StatusYes {
		t.Errorf("session locks = %+v for an unprivileged user, want yes", caps.SessionLocks)
	}
}

func TestRowLockFacts(t *testing.T) {
	cases := []struct {
		product, version string
		skip, nowait     dialects.CapabilityStatus
	}{
		{dialects.ProductMySQL, "8.0.36", dialects.StatusYes, dialects.StatusYes},
		{dialects.ProductMySQL, "8.0.0", dialects.StatusNo, dialects.StatusNo},
		{dialects.ProductMySQL, "5.7.44", dialects.StatusNo, dialects.StatusNo},
		{dialects.ProductMariaDB, "10.11.19", dialects.StatusYes, dialects.StatusYes},
		{dialects.ProductMariaDB, "10.5.2", dialects.StatusNo, dialects.StatusYes},
		{dialects.ProductMariaDB, "10.2.44", dialects.StatusNo, dialects.StatusNo},
		{dialects.ProductTiDB, "v8.5.6", dialects.StatusNo, dialects.StatusUnknown},
	}
	for _, tc := range cases {
		skip, nowait := rowLockFacts(dialects.Info{Product: tc.product, Version: tc.version})
		if skip.Status != tc.skip || nowait.Status != tc.nowait {
			t.Errorf("%s %s: skip %s nowait %s, want %s %s", tc.product, tc.version, skip.Status, nowait.Status, tc.skip, tc.nowait)
		}
	}
}

func TestRowLockProbeIsPessimisticOnTiDB(t *testing.T) {
	if p := rowLockProbe("t", dialects.Info{Product: dialects.ProductTiDB}); p.Begin != "BEGIN PESSIMISTIC" {
		t.Errorf("TiDB probe begins with %q", p.Begin)
	}
	if p := rowLockProbe("t", dialects.Info{Product: dialects.ProductMariaDB}); p.Begin != "" {
		t.Errorf("MariaDB probe begins with %q", p.Begin)
	}
	refused := rowLockProbe("t", dialects.Info{}).Refused
	for n, want := range map[uint16]bool{errLockNoWait: true, errLockWaitTimeout: true, errParse: false} {
		if got := refused(&mysql.MySQLError{Number: n}); got != want {
			t.Errorf("Refused(%d) = %v", n, got)
		}
	}
}
