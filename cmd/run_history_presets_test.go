package cmd

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/internal/livetest"
)

// A run under a ShedLock or sys_sched_lock table is recorded in
// schedlock's own run table, which --create-table creates beside it;
// history lists those runs and warns about one over 70% of its at-most,
// and so does locks ls beside a ShedLock row (a sys_sched_lock release
// deletes its row).
func TestRunHistoryOtherPresets(t *testing.T) {
	for _, preset := range []string{"shedlock", "sys_sched_lock"} {
		t.Run(preset, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "locks.db")
			r := execRun(t, context.Background(), "", "run", "--dsn", path, "--preset", preset, "--create-table", "--name", "slow",
				"--at-most", "1s", "--kill-grace", "100ms", "--", "sleep", "0.8")
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("first run: exit %d, stderr %q", r.code, r.stderr)
			}
			r = execRun(t, context.Background(), "", "run", "--dsn", path, "--preset", preset, "--name", "slow", "--history", "5", "--", "sh", "-c", "exit 4")
			if r.code != 4 || r.stderr != "" {
				t.Fatalf("second run: exit %d, stderr %q", r.code, r.stderr)
			}
			h := runCmd(t, false, nil, "locks", "history", "slow", "--dsn", path, "-o", "json")
			var runs []struct {
				Token    int64 `json:"token"`
				ExitCode int   `json:"exit_code"`
				AtMostMs int64 `json:"at_most_ms"`
			}
			if err := json.Unmarshal([]byte(h.stdout), &runs); h.err != nil || err != nil {
				t.Fatalf("history: %v %v\n%s", h.err, err, h.stdout)
			}
			if len(runs) != 2 || runs[0].Token != 2 || runs[0].ExitCode != 4 || runs[1].Token != 1 || runs[1].AtMostMs != 1000 {
				t.Fatalf("history of two runs under %s: %s", preset, h.stdout)
			}
			h = runCmd(t, false, nil, "locks", "history", "slow", "--dsn", path)
			if strings.Count(h.stderr, "warning") != 1 || !strings.Contains(h.stderr, `lock "slow": the run with token 1 took`) {
				t.Errorf("history does not warn about the slow run:\n%s", h.stderr)
			}
			if preset == "sys_sched_lock" {
				return // its release deletes the row: ls has no lock to show the run beside
			}
			// The second, quick run is the last one: ls says nothing yet.
			ls := runCmd(t, false, nil, "locks", "ls", "--dsn", path, "--preset", preset, "--all", "-o", "json")
			var locks []struct {
				LastRun *struct {
					ExitCode int `json:"exit_code"`
				} `json:"last_run"`
			}
			if err := json.Unmarshal([]byte(ls.stdout), &locks); ls.err != nil || err != nil || len(locks) != 1 || locks[0].LastRun == nil || locks[0].LastRun.ExitCode != 4 {
				t.Errorf("locks ls of the %s table has no last run: %v %v\n%s", preset, ls.err, err, ls.stdout)
			}
			slow := execRun(t, context.Background(), "", "run", "--dsn", path, "--preset", preset, "--name", "slow",
				"--at-most", "1s", "--kill-grace", "100ms", "--", "sleep", "0.8")
			if slow.code != 0 {
				t.Fatalf("third run: exit %d %v", slow.code, slow.err)
			}
			ls = runCmd(t, false, nil, "locks", "ls", "--dsn", path, "--preset", preset, "--all")
			if !strings.Contains(ls.stderr, `schedlock: warning: lock "slow": the run with token 3 took`) {
				t.Errorf("locks ls does not warn about a run over 70%% of its at-most under %s:\n%s", preset, ls.stderr)
			}
		})
	}
}

// A session-strategy run is recorded in the native table's run table when
// it exists, and locks history lists it with the sizing warning.
func TestRunHistorySessionLive(t *testing.T) {
	for _, env := range []string{livetest.Postgres, livetest.MySQL} {
		t.Run(env, func(t *testing.T) {
			raw := livetest.DSN(t, env)
			dsn := raw
			// The run table exists: a table-strategy run made it.
			name := "sess-hist-" + strings.ReplaceAll(t.Name(), "/", "-")
			r := execRun(t, context.Background(), "", "run", "--dsn", dsn, "--strategy", "table", "--create-table", "--name", name+"-setup", "--", "true")
			if r.code != 0 {
				t.Fatalf("setup run: %d %v", r.code, r.err)
			}
			t.Cleanup(func() { deleteRuns(t, env, raw, name) })
			r = execRun(t, context.Background(), "", "run", "--dsn", dsn, "--strategy", "session", "--name", name,
				"--at-most", "1s", "--kill-grace", "100ms", "--", "sleep", "0.8")
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("session run: exit %d, stderr %q", r.code, r.stderr)
			}
			h := runCmd(t, false, nil, "locks", "history", name, "--dsn", dsn, "-o", "json")
			var runs []struct {
				Token    int64 `json:"token"`
				AtMostMs int64 `json:"at_most_ms"`
			}
			if err := json.Unmarshal([]byte(h.stdout), &runs); h.err != nil || err != nil || len(runs) != 1 || runs[0].AtMostMs != 1000 {
				t.Fatalf("history of a session run: %v %v\n%s", h.err, err, h.stdout)
			}
			if !strings.Contains(h.stderr, "warning: lock \""+name+"\": the run with token") {
				t.Errorf("no sizing warning for a session run of 0.8s with --at-most 1s:\n%s", h.stderr)
			}
		})
	}
}

// deleteRuns removes the runs and lock rows of the names starting with
// name from the live server's native tables.
func deleteRuns(t *testing.T, env, raw, name string) {
	driver, mark := "pgx", "$1"
	if env == livetest.MySQL {
		driver, mark = "mysql", "?"
	}
	db, err := sql.Open(driver, raw)
	if err != nil {
		t.Log(err)
		return
	}
	defer db.Close()
	for _, table := range []string{"schedlock_runs", "schedlock"} {
		if _, err := db.Exec("DELETE FROM "+table+" WHERE name LIKE "+mark, name+"%"); err != nil {
			t.Log(err)
		}
	}
}

// A session-strategy run where detection saw no native lock table records
// nothing and tries nothing; with --history it says why.
func TestRunHistorySessionNoTableLive(t *testing.T) {
	raw := livetest.DSN(t, livetest.Postgres)
	db, err := sql.Open("pgx", raw)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	schema := "nohist_" + strings.ToLower(strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "_"))
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = db.Exec("DROP SCHEMA " + schema + " CASCADE") }()
	sep := "?"
	if strings.Contains(raw, "?") {
		sep = "&"
	}
	dsn := raw + sep + "search_path=" + schema
	r := execRun(t, context.Background(), "", "run", "--dsn", dsn, "--strategy", "session", "--name", "job", "--", "true")
	if r.code != 0 || r.stderr != "" {
		t.Errorf("session run, no tables, --history not given: exit %d, stderr %q; want silence", r.code, r.stderr)
	}
	r = execRun(t, context.Background(), "", "run", "--dsn", dsn, "--strategy", "session", "--name", "job", "--history", "5", "--", "true")
	if r.code != 0 || strings.Count(r.stderr, "warning") != 1 || !strings.Contains(r.stderr, "runs are not recorded: the session strategy records runs in schedlock_runs beside the native lock table, which does not exist") {
		t.Errorf("session run, no tables, --history 5: exit %d, stderr %q", r.code, r.stderr)
	}
}
