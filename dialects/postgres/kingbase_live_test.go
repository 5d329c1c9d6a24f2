package postgres

import (
	"context"
	"database/sql"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
	"github.com/schedlock/schedlock/internal/livetest"
)

// kingbaseEnv names the variable that points the live tests at a
// KingbaseES server: a pgx URL (postgres://user:password@host:54321/db) or
// the same with the kingbase:// scheme (port 54321 when none is given).
const kingbaseEnv = "SCHEDLOCK_TEST_KINGBASE_DSN"

// kingbaseURL turns a kingbase:// URL into the postgres:// URL pgx reads.
func kingbaseURL(dsn string) (string, error) {
	if !strings.HasPrefix(dsn, "kingbase://") {
		return dsn, nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", err
	}
	u.Scheme = "postgres"
	if u.Port() == "" {
		u.Host += ":54321"
	}
	return u.String(), nil
}

// liveKingbase opens and detects the live KingbaseES server. The test is
// skipped when kingbaseEnv is unset and fails when it is set but the server
// does not answer or is not KingbaseES.
func liveKingbase(t *testing.T) *Backend {
	t.Helper()
	raw := livetest.DSN(t, kingbaseEnv)
	dsn, err := kingbaseURL(raw)
	if err != nil {
		t.Fatalf("%s is not a URL: %v", kingbaseEnv, err)
	}
	sqlDB, err := sql.Open(DriverName, dsn)
	if err != nil {
		t.Fatalf("open %s: %v", kingbaseEnv, err)
	}
	t.Cleanup(func() { _ = sqlDB.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := sqlDB.PingContext(ctx); err != nil {
		t.Fatalf("%s is set but the server does not answer: %v", kingbaseEnv, explainAuthError(err))
	}
	db, err := New(ctx, sqlDB, nil)
	if err != nil {
		t.Fatalf("detect: %v", err)
	}
	if db.Info.Product != dialects.ProductKingbase {
		t.Fatalf("%s points at %+v, not KingbaseES", kingbaseEnv, db.Info)
	}
	return db
}

func TestKingbaseLiveDetect(t *testing.T) {
	db := liveKingbase(t)
	facts := db.facts
	if facts == nil {
		t.Fatal("detection recorded no facts")
	}
	strategy, why := db.Recommend()
	t.Logf("detected %+v; catalog %+v; advisory probe %s: %s; recommended %s: %s",
		db.Info, facts.catalog, facts.advisory.Status, facts.advisory.Detail, strategy, why)
	if facts.catalog.Locks == "" || facts.catalog.BackendPID == "" {
		t.Errorf("neither pg_ nor sys_ names found for the lock view or the backend pid: %+v", facts.catalog)
	}
	if (strategy == dialects.StrategySession) != facts.proven() {
		t.Errorf("recommended %s although the advisory probe said %s", strategy, facts.advisory.Status)
	}
}

// TestKingbaseLiveConformance runs the lock-contract suite on every
// strategy the server supports: the table strategy always, the session
// strategy when detection proved its advisory locks.
func TestKingbaseLiveConformance(t *testing.T) {
	db := liveKingbase(t)
	strategies := []dialects.Strategy{dialects.StrategyTable}
	if _, err := db.SessionLocker(); err == nil {
		strategies = append([]dialects.Strategy{dialects.StrategySession}, strategies...)
	} else {
		t.Logf("no session strategy: %v", err)
	}
	for _, strategy := range strategies {
		t.Run(string(strategy), func(t *testing.T) {
			dialecttest.Run(t, db, dialecttest.Options{Strategies: []dialects.Strategy{strategy}})
		})
	}
}

func TestKingbaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"kingbase://system:pw@kb1/jobs":            "postgres://system:pw@kb1:54321/jobs",
		"kingbase://system@kb1:5432/jobs?x=1":      "postgres://system@kb1:5432/jobs?x=1",
		"postgres://system@kb1:54321/jobs":         "postgres://system@kb1:54321/jobs",
		"host=kb1 port=54321 user=system dbname=x": "host=kb1 port=54321 user=system dbname=x",
	} {
		if got, err := kingbaseURL(in); err != nil || got != want {
			t.Errorf("kingbaseURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestKingbaseProbesLiveOnPostgres runs KingbaseES's detection probes on
// the live PostgreSQL server, which proves their SQL runs on a real
// PostgreSQL-derived server and changes nothing: every name is found under
// its pg_ name, database_mode is unknown, the advisory locks pass the
// two-connection proof and no lock is left behind.
func TestKingbaseProbesLiveOnPostgres(t *testing.T) {
	app := unique("schedlock-kb-probe-")
	db, err := sql.Open(DriverName, liveDSNWith(t, map[string]string{"application_name": app}))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := testCtx(t)
	c, err := ProbeCatalog(ctx, db)
	if err != nil || c != PostgresCatalog {
		t.Fatalf("ProbeCatalog on PostgreSQL = %+v, %v; want the pg_ names", c, err)
	}
	mode, err := probeKingbaseMode(ctx, db)
	if err != nil || mode != "" {
		t.Errorf("database_mode on PostgreSQL = %q, %v; want none", mode, err)
	}
	facts, err := proveAdvisory(ctx, db, c)
	if err != nil {
		t.Fatal(err)
	}
	if facts == nil || !facts.proven() || facts.catalog != c {
		t.Errorf("advisory proof on PostgreSQL = %+v; want proven", facts.advisory)
	}
	var held int
	err = liveDB(t).QueryRowContext(ctx, `SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND a.application_name = $1`, app).Scan(&held)
	if err != nil {
		t.Fatal(err)
	}
	if held != 0 {
		t.Errorf("%d advisory locks held after the probes", held)
	}
}
