package postgres

import (
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/checks"
)

// TestSelfcheckLeavesNothingBehind runs the whole selfcheck suite (session
// and table strategy, the kill check included) on a pool whose sessions
// carry a unique application_name, then proves from another connection
// that no table of the run, no advisory lock and no session of that pool
// is left.
func TestSelfcheckLeavesNothingBehind(t *testing.T) {
	observer := liveDB(t)
	app := unique("selfcheck_leak_")
	sep := "?"
	if strings.Contains(liveDSN(t), "?") {
		sep = "&"
	}
	pool, err := sql.Open(DriverName, liveDSN(t)+sep+"application_name="+app)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	ctx := testCtx(t)
	db, err := New(ctx, pool, nil)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	prefix := checks.NewPrefix()
	rep, err := checks.Run(ctx, checks.Config{Backend: db, Prefix: prefix})
	if err != nil {
		t.Fatalf("selfcheck: %v", err)
	}
	if rep.Failed != 0 {
		for _, r := range rep.Results {
			if r.Status == checks.StatusFail {
				t.Errorf("%s: %s", r.ID, r.Detail)
			}
		}
	}

	count := func(query string, args ...any) int {
		t.Helper()
		var n int
		if err := observer.QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return n
	}
	if n := count(`SELECT count(*) FROM pg_tables WHERE tablename LIKE $1 || '%'`, prefix); n != 0 {
		t.Errorf("%d tables named %s* left behind", n, prefix)
	}
	if n := count(`SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid)
		WHERE l.locktype = 'advisory' AND a.application_name = $1`, app); n != 0 {
		t.Errorf("%d advisory locks still held by the run's sessions", n)
	}
	_ = pool.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		n := count(`SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app)
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions of the run still open after the pool closed", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
