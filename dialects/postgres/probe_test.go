package postgres

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// liveDSNWith returns the live DSN with extra query parameters (pgx passes
// unknown ones to the server as run-time parameters).
func liveDSNWith(t *testing.T, params map[string]string) string {
	t.Helper()
	u, err := url.Parse(liveDSN(t))
	if err != nil {
		t.Fatalf("%s is not a URL: %v", dsnEnv, err)
	}
	q := u.Query()
	for k, v := range params {
		q.Set(k, v)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// openProbed opens dsn, detects it and runs the probe.
func openProbed(t *testing.T, dsn string, opts dialects.ProbeOptions) dialects.Capabilities {
	t.Helper()
	raw, err := sql.Open(DriverName, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = raw.Close() })
	db, err := New(testCtx(t), raw, nil)
	if err != nil {
		t.Fatalf("the server in %s does not answer: %v", dsnEnv, err)
	}
	caps, err := db.Probe(testCtx(t), opts)
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	return caps
}

// probeTables lists the tables named like the probe's.
func probeTables(t *testing.T, db *sql.DB) map[string]bool {
	t.Helper()
	rows, err := db.QueryContext(testCtx(t), `SELECT schemaname || '.' || tablename FROM pg_tables WHERE tablename LIKE 'schedlock\_probe\_%'`)
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
	admin := liveDB(t)
	app := unique("schedlock_probe_test_")
	before := probeTables(t, admin)
	caps := openProbed(t, liveDSNWith(t, map[string]string{"application_name": app}), dialects.ProbeOptions{})

	want := map[string]dialects.Capability{
		"session_locks": caps.SessionLocks, "skip_locked": caps.SkipLocked, "nowait": caps.NoWait,
		"lock_listing": caps.LockListing, "kill_sessions": caps.KillSessions, "isolation": caps.Isolation,
	}
	for name, c := range want {
		if !c.Supported || c.Status != dialects.StatusYes {
			t.Errorf("%s = %+v on PostgreSQL as superuser, want yes", name, c)
		}
	}
	for name, c := range map[string]dialects.Capability{"session_locks": caps.SessionLocks, "skip_locked": caps.SkipLocked, "nowait": caps.NoWait, "lock_listing": caps.LockListing} {
		if !strings.HasPrefix(c.Detail, "proved:") {
			t.Errorf("%s was not proved live: %q", name, c.Detail)
		}
	}
	if !strings.Contains(caps.NoWait.Detail, "55P03") {
		t.Errorf("NOWAIT detail %q does not quote the server's 55P03", caps.NoWait.Detail)
	}
	var isolation string
	if err := admin.QueryRowContext(testCtx(t), "SHOW transaction_isolation").Scan(&isolation); err != nil {
		t.Fatal(err)
	}
	if caps.Isolation.Detail != isolation {
		t.Errorf("isolation %q, server default %q", caps.Isolation.Detail, isolation)
	}
	if len(caps.MissingPrivileges) != 0 {
		t.Errorf("superuser misses privileges: %+v", caps.MissingPrivileges)
	}
	if !caps.Clock.Measured || caps.Clock.Skew.Abs() >= time.Second || caps.Clock.RoundTrip <= 0 {
		t.Errorf("clock %+v: want a measured skew under 1s on the same host", caps.Clock)
	}
	r := caps.Recommended
	if r.LockStrategy != dialects.StrategySession || r.ClaimStrategy != dialects.ClaimSkipLocked {
		t.Errorf("recommended %s / %s, want session / skip-locked on PostgreSQL 15", r.LockStrategy, r.ClaimStrategy)
	}

	// Nothing left behind: no probe table, no lock held by the probe's
	// sessions.
	after := probeTables(t, admin)
	for name := range after {
		if !before[name] {
			t.Errorf("probe table %s left behind", name)
		}
	}
	var locks int
	err := admin.QueryRowContext(testCtx(t), `SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
WHERE a.application_name = $1 AND l.locktype IN ('advisory', 'tuple', 'transactionid')`, app).Scan(&locks)
	if err != nil {
		t.Fatal(err)
	}
	if locks != 0 {
		t.Errorf("%d locks still held by the probe's sessions", locks)
	}
}

func TestProbeLiveIsolationIsTheSessionDefault(t *testing.T) {
	caps := openProbed(t, liveDSNWith(t, map[string]string{"default_transaction_isolation": "serializable"}), dialects.ProbeOptions{ReadOnly: true})
	if caps.Isolation.Detail != "serializable" {
		t.Errorf("isolation %q with default_transaction_isolation=serializable", caps.Isolation.Detail)
	}
}

func TestProbeLiveReadOnlyCreatesNothing(t *testing.T) {
	admin := liveDB(t)
	before := probeTables(t, admin)
	caps := openProbed(t, liveDSN(t), dialects.ProbeOptions{ReadOnly: true})
	for name, c := range map[string]dialects.Capability{"skip_locked": caps.SkipLocked, "nowait": caps.NoWait} {
		if !c.Supported || !strings.HasPrefix(c.Detail, "by version:") || !strings.HasSuffix(c.Detail, dialects.NotProbedReadOnly) {
			t.Errorf("%s = %+v, want yes by version, not probed", name, c)
		}
	}
	if caps.SessionLocks.Status != dialects.StatusYes {
		t.Errorf("session locks %+v: still probed in read-only mode", caps.SessionLocks)
	}
	for name := range probeTables(t, admin) {
		if !before[name] {
			t.Errorf("read-only probe created %s", name)
		}
	}
}

// TestProbeLiveUnprivilegedRole probes as a fresh login role that is no
// superuser, is no member of pg_signal_backend, and whose search_path is a
// schema it may use but not create in: the probe must name each missing
// privilege with its GRANT.
func TestProbeLiveUnprivilegedRole(t *testing.T) {
	admin := liveDB(t)
	ctx := testCtx(t)
	role := unique("schedlock_probe_role_")
	schema := unique("schedlock_probe_schema_")
	for _, stmt := range []string{
		"CREATE ROLE " + role + " LOGIN",
		"CREATE SCHEMA " + schema,
		"GRANT USAGE ON SCHEMA " + schema + " TO " + role,
		"ALTER ROLE " + role + " SET search_path = " + schema,
	} {
		if _, err := admin.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = admin.ExecContext(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1", role)
		for _, stmt := range []string{"DROP SCHEMA " + schema, "DROP ROLE " + role} {
			if _, err := admin.ExecContext(ctx, stmt); err != nil {
				t.Errorf("%s: %v", stmt, err)
			}
		}
	})
	u, err := url.Parse(liveDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	caps := openProbed(t, u.String(), dialects.ProbeOptions{})

	if c := caps.KillSessions; c.Status != dialects.StatusNo || !strings.Contains(c.Remedy, `GRANT pg_signal_backend TO "`+role+`"`) {
		t.Errorf("kill_sessions = %+v, want no with the GRANT", c)
	}
	if c := caps.SkipLocked; !c.Supported || !strings.Contains(c.Detail, "cannot create the probe table") {
		t.Errorf("skip_locked = %+v, want yes by version, not probed", c)
	}
	if c := caps.LockListing; !c.Supported || !strings.Contains(c.Remedy, "pg_read_all_stats") {
		t.Errorf("lock_listing = %+v, want yes with the pg_read_all_stats hint", c)
	}
	if caps.SessionLocks.Status != dialects.StatusYes {
		t.Errorf("session locks = %+v for an unprivileged role, want yes", caps.SessionLocks)
	}
	grants := map[string]string{}
	for _, p := range caps.MissingPrivileges {
		grants[p.Privilege] = p.Grant
	}
	if g := grants[`CREATE on schema "`+schema+`"`]; g != `GRANT CREATE ON SCHEMA "`+schema+`" TO "`+role+`"` {
		t.Errorf("missing CREATE grant = %q (all: %+v)", g, caps.MissingPrivileges)
	}
	if g := grants["pg_signal_backend"]; g != `GRANT pg_signal_backend TO "`+role+`"` {
		t.Errorf("missing pg_signal_backend grant = %q", g)
	}
}

func TestRowLockFacts(t *testing.T) {
	cases := []struct {
		product, version string
		skip, nowait     dialects.CapabilityStatus
	}{
		{dialects.ProductPostgreSQL, "15.20", dialects.StatusYes, dialects.StatusYes},
		{dialects.ProductPostgreSQL, "9.5.0", dialects.StatusYes, dialects.StatusYes},
		{dialects.ProductPostgreSQL, "9.4.26", dialects.StatusNo, dialects.StatusYes},
		{dialects.ProductCockroachDB, "v24.3.0", dialects.StatusYes, dialects.StatusYes},
		{dialects.ProductCockroachDB, "v22.1.9", dialects.StatusNo, dialects.StatusYes},
		{dialects.ProductCockroachDB, "v20.1.0", dialects.StatusNo, dialects.StatusNo},
		{dialects.ProductYugabyteDB, "2.18.0.1", dialects.StatusYes, dialects.StatusUnknown},
		{dialects.ProductKingbase, "V008R006C007B0024", dialects.StatusUnknown, dialects.StatusUnknown},
		{"", "", dialects.StatusUnknown, dialects.StatusUnknown},
	}
	for _, tc := range cases {
		skip, nowait := rowLockFacts(dialects.Info{Product: tc.product, Version: tc.version})
		if skip.Status != tc.skip || nowait.Status != tc.nowait {
			t.Errorf("%s %s: skip %s nowait %s, want %s %s", tc.product, tc.version, skip.Status, nowait.Status, tc.skip, tc.nowait)
		}
		if skip.Supported != (skip.Status == dialects.StatusYes) || !strings.HasPrefix(skip.Detail, "by version:") {
			t.Errorf("%s %s: inconsistent %+v", tc.product, tc.version, skip)
		}
	}
}

func TestKillCapability(t *testing.T) {
	pg := dialects.Info{Product: dialects.ProductPostgreSQL, Version: "15.20"}
	cases := []struct {
		name   string
		info   dialects.Info
		rights roleRights
		want   dialects.CapabilityStatus
		says   string
	}{
		{"superuser", pg, roleRights{user: "postgres", superuser: true}, dialects.StatusYes, "superuser"},
		{"signal member", pg, roleRights{user: "ops", signal: true}, dialects.StatusYes, "pg_signal_backend"},
		{"plain role", pg, roleRights{user: "app"}, dialects.StatusNo, "only its own role"},
		{"old server", pg, roleRights{user: "app", signalErr: errors.New(`role "pg_signal_backend" does not exist`)}, dialects.StatusNo, "could not be checked"},
		{"unreadable", pg, roleRights{err: errors.New("boom")}, dialects.StatusUnknown, "boom"},
		{"cockroach", dialects.Info{Product: dialects.ProductCockroachDB}, roleRights{user: "root", superuser: true}, dialects.StatusUnknown, "CANCEL SESSION"},
	}
	for _, tc := range cases {
		c := killCapability(tc.info, tc.rights)
		if c.Status != tc.want || !strings.Contains(c.Detail, tc.says) {
			t.Errorf("%s: %+v, want %s saying %q", tc.name, c, tc.want, tc.says)
		}
	}
}
