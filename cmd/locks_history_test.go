package cmd

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// runsFile is a SQLite file with the native lock table and its run table,
// made by run --create-table, and three runs of "nightly".
func runsFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "locks.db")
	for i, code := range []string{"0", "3", "0"} {
		args := []string{"run", "--dsn", path, "--name", "nightly", "--history", "2", "--", "sh", "-c", "exit " + code}
		if i == 0 {
			args = append([]string{"run", "--create-table"}, args[1:]...)
		}
		if r := execRun(t, context.Background(), "", args...); r.code != runExitCodeOf(code) {
			t.Fatalf("run %d: exit %d, %v", i, r.code, r.err)
		}
	}
	return path
}

func runExitCodeOf(code string) int {
	if code == "3" {
		return 3
	}
	return 0
}

func TestLocksHistory(t *testing.T) {
	path := runsFile(t)
	r := runCmd(t, false, nil, "locks", "history", "nightly", "--dsn", path, "-o", "json")
	if r.err != nil {
		t.Fatal(r.err)
	}
	var runs []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &runs); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if len(runs) != 2 {
		t.Fatalf("--history 2 kept %d runs:\n%s", len(runs), r.stdout)
	}
	var fields []string
	for k := range runs[0] {
		fields = append(fields, k)
	}
	sort.Strings(fields)
	want := []string{"at_most_ms", "duration_ms", "ended_at", "exit_code", "host", "name", "owner", "schedule", "started_at", "token", "used"}
	if !reflect.DeepEqual(fields, want) {
		t.Errorf("JSON fields %v, want %v", fields, want)
	}
	if runs[0]["token"].(float64) != 3 || runs[1]["token"].(float64) != 2 || runs[1]["exit_code"].(float64) != 3 || runs[0]["at_most_ms"].(float64) != 1800000 {
		t.Errorf("runs newest first with their exit codes: %s", r.stdout)
	}
	r = runCmd(t, false, nil, "locks", "history", "nightly", "--dsn", path, "--limit", "1")
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); r.err != nil || len(lines) != 2 || !strings.HasPrefix(lines[1], "nightly\t3\t") {
		t.Errorf("--limit 1 piped: %v\n%s", r.err, r.stdout)
	}
	r = runCmd(t, false, nil, "locks", "history", "other", "--dsn", path, "-o", "json")
	if r.err != nil || strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("no runs: %v %q, want []", r.err, r.stdout)
	}
	r = runCmd(t, false, nil, "locks", "history", "nightly", "--dsn", path, "--table", "elsewhere")
	if ExitCode(r.err) != CodeUsage || !strings.Contains(r.err.Error(), "elsewhere_runs does not exist") {
		t.Errorf("missing run table: %v", r.err)
	}
	r = runCmd(t, true, nil, "locks", "ls", "--dsn", path)
	if r.err != nil || !strings.Contains(r.stdout, "LAST RUN") || !strings.Contains(r.stdout, "of 30m (0%)") {
		t.Errorf("locks ls on a terminal has no LAST RUN:\n%s", r.stdout)
	}
	r = runCmd(t, false, nil, "locks", "ls", "--dsn", path, "-o", "json")
	var ls []struct {
		LastRun *struct {
			Token    int `json:"token"`
			ExitCode int `json:"exit_code"`
		} `json:"last_run"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &ls); err != nil || len(ls) != 1 || ls[0].LastRun == nil || ls[0].LastRun.Token != 3 {
		t.Errorf("locks ls -o json last_run: %v\n%s", err, r.stdout)
	}
}

// The overrun warning rounds finely enough below 10s that its advice is
// not the at-most already in use, and rounds the advised at-most up.
func TestOverrunWarningRounding(t *testing.T) {
	cases := []struct {
		duration, atMost time.Duration
		want             string // "" when there is no warning
	}{
		{1601 * time.Millisecond, 2 * time.Second, "took 1.6s, 80% of its at-most 2s: give --at-most at least the queue wait plus the run time plus 30% (here 2.1s plus the wait)"},
		{1540 * time.Millisecond, 2 * time.Second, "took 1.5s, 77% of its at-most 2s: give --at-most at least the queue wait plus the run time plus 30% (here 2.1s plus the wait)"},
		{800 * time.Millisecond, time.Second, "took 800ms, 80% of its at-most 1s: give --at-most at least the queue wait plus the run time plus 30% (here 1.1s plus the wait)"},
		{450 * time.Millisecond, 500 * time.Millisecond, "took 450ms, 90% of its at-most 500ms: give --at-most at least the queue wait plus the run time plus 30% (here 585ms plus the wait)"},
		{8 * time.Second, 10 * time.Second, "took 8s, 80% of its at-most 10s: give --at-most at least the queue wait plus the run time plus 30% (here 11s plus the wait)"},
		{45 * time.Minute, time.Hour, "took 45m, 75% of its at-most 1h: give --at-most at least the queue wait plus the run time plus 30% (here 58m30s plus the wait)"},
		{100 * time.Second, 120 * time.Second, "took 1m40s, 83% of its at-most 2m: give --at-most at least the queue wait plus the run time plus 30% (here 2m10s plus the wait)"},
		{1001 * time.Second, 1200 * time.Second, "took 16m41s, 83% of its at-most 20m: give --at-most at least the queue wait plus the run time plus 30% (here 21m42s plus the wait)"},
		{time.Second, 2 * time.Second, ""},
	}
	for _, tc := range cases {
		got := overrunWarning("job", dialects.Run{Token: 4, Duration: tc.duration, AtMost: tc.atMost})
		want := ""
		if tc.want != "" {
			want = `lock "job": the run with token 4 ` + tc.want
		}
		if got != want {
			t.Errorf("%s of %s:\n got %q\nwant %q", tc.duration, tc.atMost, got, want)
		}
	}
}

func TestLocksLsWarnsAboutLongRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks.db")
	r := execRun(t, context.Background(), "", "run", "--create-table", "--dsn", path, "--name", "slow", "--at-most", "1s", "--kill-grace", "100ms", "--", "sleep", "0.8")
	if r.code != 0 {
		t.Fatalf("run: %d %v", r.code, r.err)
	}
	ls := runCmd(t, false, nil, "locks", "ls", "--dsn", path)
	if !strings.Contains(ls.stderr, `schedlock: warning: lock "slow": the run with token 1 took`) || !strings.Contains(ls.stderr, "plus the run time plus 30%") {
		t.Errorf("no warning about a run over 70%% of its at-most:\n%s", ls.stderr)
	}
	h := runCmd(t, false, nil, "locks", "history", "slow", "--dsn", path)
	if !strings.Contains(h.stderr, "warning: lock \"slow\": the run with token 1") {
		t.Errorf("history does not warn:\n%s", h.stderr)
	}
}

func TestRunHistoryMissingTable(t *testing.T) {
	path, _ := sqliteLocks(t) // the lock table only, as before run history
	r := execRun(t, context.Background(), "", "run", "--dsn", path, "--name", "job", "--", "true")
	if r.code != 0 || r.stderr != "" {
		t.Errorf("no run table, --history not given: exit %d, stderr %q; want silence", r.code, r.stderr)
	}
	r = execRun(t, context.Background(), "", "run", "--dsn", path, "--name", "job", "--history", "10", "--", "sh", "-c", "exit 5")
	if r.code != 5 || strings.Count(r.stderr, "warning") != 1 || !strings.Contains(r.stderr, "table schedlock_runs does not exist; create it with --create-table") {
		t.Errorf("no run table, --history given: exit %d, stderr %q; want exit 5 and one warning", r.code, r.stderr)
	}
	r = execRun(t, context.Background(), "", "run", "--dsn", path, "--name", "job", "--history", "-1", "--", "true")
	if r.code != CodeUsage {
		t.Errorf("--history -1: exit %d", r.code)
	}
}
