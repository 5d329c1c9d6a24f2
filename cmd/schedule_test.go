package cmd

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/schedlock/schedlock/dialects/sqlite"
)

func TestRunScheduleBadInput(t *testing.T) {
	db, locker := sqliteLocks(t)
	for _, spec := range []string{"*/5 * * *", "every 5m", "@every -5m", "61 * * * *", "", "@yearly junk"} {
		r := execRun(t, context.Background(), "", "run", "--dsn", db, "--name", "bad", "--schedule", spec, "--", "true")
		if r.code != CodeUsage {
			t.Errorf("--schedule %q: exit %d (%v), want %d", spec, r.code, r.err, CodeUsage)
			continue
		}
		if msg := r.err.Error(); !strings.Contains(msg, "--schedule") || strings.Contains(msg, "\n") {
			t.Errorf("--schedule %q: error %q: want one line naming --schedule", spec, msg)
		}
	}
	assertFree(t, locker, "bad")
}

// listedSchedule is the part of `locks ls -o json` that judges the
// schedule.
type listedSchedule struct {
	Name        string   `json:"name"`
	Schedule    *string  `json:"schedule"`
	Interval    *float64 `json:"schedule_interval_seconds"`
	SuccessDue  *string  `json:"success_due"`
	Missed      bool     `json:"missed"`
	LastSuccess *struct {
		Token int64 `json:"token"`
	} `json:"last_success"`
}

func listSchedules(t *testing.T, path string) (map[string]listedSchedule, string) {
	t.Helper()
	r := runCmd(t, false, nil, "locks", "ls", "--dsn", path, "--all", "-o", "json")
	if r.err != nil {
		t.Fatal(r.err)
	}
	var locks []listedSchedule
	if err := json.Unmarshal([]byte(r.stdout), &locks); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	out := map[string]listedSchedule{}
	for _, l := range locks {
		out[l.Name] = l
	}
	return out, r.stderr
}

// A job run with --schedule '*/5 * * * *': on time, locks ls and locks
// history say nothing; once its last success started more than two of
// its times ago (moved back in the run table) — whatever ran since
// failed — both warn and the JSON says missed, with the interval; a new
// success ends it. A job without a schedule is never judged.
func TestRunScheduleMissed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks.db")
	run := func(name, code string, extra ...string) {
		t.Helper()
		args := append([]string{"run", "--create-table", "--dsn", path, "--name", name}, extra...)
		args = append(args, "--", "sh", "-c", "exit "+code)
		if r := execRun(t, context.Background(), "", args...); r.code != runExitCodeOf(code) {
			t.Fatalf("run %s: exit %d, %v", name, r.code, r.err)
		}
	}
	run("report", "0", "--schedule", "*/5 * * * *")
	run("plain", "0")
	locks, stderr := listSchedules(t, path)
	rep := locks["report"]
	if rep.Schedule == nil || *rep.Schedule != "*/5 * * * *" || rep.Interval == nil || *rep.Interval != 300 || rep.Missed || rep.SuccessDue == nil || rep.LastSuccess == nil || rep.LastSuccess.Token != 1 {
		t.Errorf("on time: %+v", rep)
	}
	if p := locks["plain"]; p.Schedule != nil || p.Missed || p.SuccessDue != nil || p.LastSuccess == nil {
		t.Errorf("no schedule: %+v", p)
	}
	if strings.Contains(stderr, "missed") {
		t.Errorf("on time, yet: %s", stderr)
	}

	db, err := sql.Open(sqlite.DriverName, sqlite.DSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`UPDATE schedlock_runs SET started_at = strftime('%Y-%m-%d %H:%M:%f', 'now', '-16 minutes') WHERE name = 'report'`); err != nil {
		t.Fatal(err)
	}
	run("report", "3", "--schedule", "*/5 * * * *") // a failure is no success
	locks, stderr = listSchedules(t, path)
	if rep := locks["report"]; !rep.Missed || rep.LastSuccess == nil || rep.LastSuccess.Token != 1 {
		t.Errorf("16 minutes after the last success: %+v", rep)
	}
	if !strings.Contains(stderr, `lock "report" missed its schedule "*/5 * * * *"`) {
		t.Errorf("locks ls stderr: %s", stderr)
	}
	h := runCmd(t, false, nil, "locks", "history", "report", "--dsn", path)
	if h.err != nil || !strings.Contains(h.stderr, `lock "report" missed its schedule`) || !strings.Contains(h.stdout, "\t*/5 * * * *\n") {
		t.Errorf("locks history: %v\n%s\n%s", h.err, h.stdout, h.stderr)
	}

	run("report", "0", "--schedule", "*/5 * * * *")
	locks, stderr = listSchedules(t, path)
	if rep := locks["report"]; rep.Missed || rep.LastSuccess == nil || rep.LastSuccess.Token != 3 {
		t.Errorf("after a new success: %+v", rep)
	}
	if strings.Contains(stderr, "missed") {
		t.Errorf("after a new success: %s", stderr)
	}
}
