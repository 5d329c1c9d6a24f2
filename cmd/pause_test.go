package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// pausedFile is a SQLite file whose native table has a row for "nightly"
// (one run of it) and none for anything else.
func pausedFile(t *testing.T) (string, dialects.TableLocker) {
	t.Helper()
	path, l := sqliteLocks(t)
	lease, err := l.Acquire(context.Background(), "nightly", dialects.Options{Owner: "node-a"})
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	return path, l
}

func rowOf(t *testing.T, l dialects.TableLocker, name string) dialects.Row {
	t.Helper()
	row, _, err := l.Inspect(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return row
}

func TestPauseRefusals(t *testing.T) {
	path, l := pausedFile(t)
	held := hold(t, l, "running", "node-b")
	defer func() { _ = held.Release(context.Background()) }()
	cases := []struct {
		name string
		tty  bool
		args []string
		code int
		want string
	}{
		{"no length", false, []string{"pause", "nightly", "--yes"}, CodeUsage, "say how long: --for 2h, or --until"},
		{"both lengths", false, []string{"pause", "nightly", "--for", "1h", "--until", "2099-01-01T00:00:00Z", "--yes"}, CodeUsage, "--for and --until exclude each other"},
		{"until in the past", false, []string{"pause", "nightly", "--until", "2020-01-01T00:00:00Z", "--yes"}, CodeUsage, "is not in the future"},
		{"until not RFC 3339", false, []string{"pause", "nightly", "--until", "tomorrow", "--yes"}, CodeUsage, "not an RFC 3339 time"},
		{"no terminal, no --yes", false, []string{"pause", "nightly", "--for", "1h"}, CodeUsage, `refusing to pause "nightly" without confirmation: not a terminal; pass --yes`},
		{"resume without --yes", false, []string{"resume", "nightly"}, CodeUsage, `refusing to resume "nightly" without confirmation`},
		{"no such lock", false, []string{"pause", "nightly-typo", "--for", "1h", "--yes"}, CodeNegative, `lock "nightly-typo" has no row in table schedlock: nothing to pause; check the name`},
		{"running job", false, []string{"pause", "running", "--for", "1h", "--yes"}, CodeNegative, `lock "running" in table schedlock is held by "node-b" until`},
		{"resume of a lock not paused", false, []string{"resume", "nightly", "--yes"}, CodeNegative, `lock "nightly" in table schedlock is not paused (it is expired)`},
		{"resume of no lock", false, []string{"resume", "nothing", "--yes"}, CodeNegative, `lock "nothing" is not paused`},
		{"two names", false, []string{"pause", "a", "b", "--for", "1h", "--yes"}, CodeUsage, "pause takes one lock name, got 2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runCmd(t, tc.tty, nil, append(tc.args, "--dsn", path)...)
			if got := ExitCode(r.err); got != tc.code || r.err == nil || !strings.Contains(r.err.Error(), tc.want) {
				t.Fatalf("exit %d, %v; want %d and %q", got, r.err, tc.code, tc.want)
			}
			if strings.Count(r.err.Error(), "\n") > 0 {
				t.Errorf("more than one line: %q", r.err)
			}
		})
	}
	if row := rowOf(t, l, "nightly"); row.Owner != "node-a" || dialects.TableRowState(row) != dialects.StateExpired {
		t.Errorf("a refusal changed the row: %+v", row)
	}
}

func TestPauseRunResume(t *testing.T) {
	path, l := pausedFile(t)
	r := runCmd(t, false, nil, "pause", "nightly", "--for", "2h", "--by", "ops-oncall", "--dsn", path, "--dry-run")
	if r.err != nil || !strings.Contains(r.stdout, "after:  paused, owner paused:ops-oncall") || !strings.Contains(r.stdout, "Nothing changed (--dry-run).") {
		t.Fatalf("dry run: %v\n%s", r.err, r.stdout)
	}
	if row := rowOf(t, l, "nightly"); row.Owner != "node-a" {
		t.Fatalf("--dry-run changed the row: %+v", row)
	}
	r = runCmd(t, false, nil, "pause", "nightly", "--for", "2h", "--by", "ops-oncall", "--dsn", path, "--yes", "-o", "json")
	if r.err != nil {
		t.Fatal(r.err)
	}
	var v struct {
		Action  string `json:"action"`
		Changed bool   `json:"changed"`
		Before  *struct {
			State string `json:"state"`
		} `json:"before"`
		After *struct {
			State     string `json:"state"`
			Owner     string `json:"owner"`
			LockUntil string `json:"lock_until"`
		} `json:"after"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if v.Action != "pause" || !v.Changed || v.Before == nil || v.Before.State != "expired" || v.After == nil || v.After.State != "paused" || v.After.Owner != "paused:ops-oncall" {
		t.Fatalf("pause -o json: %s", r.stdout)
	}
	until, err := time.Parse(time.RFC3339, v.After.LockUntil)
	if err != nil || time.Until(until) < 110*time.Minute || time.Until(until) > 130*time.Minute {
		t.Errorf("paused until %q (%v), want in about 2h", v.After.LockUntil, err)
	}

	// Every node now skips the job, naming who paused it.
	marker := filepath.Join(t.TempDir(), "ran")
	run := execRun(t, context.Background(), "", "run", "--dsn", path, "--name", "nightly", "--skipped-exit-code", "99", "--", "touch", marker)
	if run.code != 99 || !strings.Contains(run.err.Error(), `skipped touch: lock "nightly" is paused by ops-oncall until `) {
		t.Fatalf("run of a paused job: exit %d, %v", run.code, run.err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the paused job ran")
	}
	ls := runCmd(t, false, nil, "locks", "ls", "--dsn", path, "--state", "paused")
	if ls.err != nil || !strings.Contains(ls.stdout, "nightly\t\tpaused\tpaused:ops-oncall") {
		t.Errorf("locks ls --state paused: %v\n%s", ls.err, ls.stdout)
	}

	un := runCmd(t, false, nil, "unlock", "nightly", "--dsn", path, "--yes")
	if ExitCode(un.err) != CodeNegative || !strings.Contains(un.err.Error(), "it is paused by ops-oncall until") || !strings.Contains(un.err.Error(), "end the pause with schedlock resume nightly") {
		t.Errorf("unlock of a paused lock: %v", un.err)
	}
	rr := runWithInput(t, true, "y\n", "resume", "nightly", "--dsn", path)
	if r = (result{stdout: rr.stdout, stderr: rr.stderr, err: rr.err}); r.err != nil || !strings.Contains(r.stderr, "Resume it? [y/N]") || !strings.Contains(r.stdout, `Resumed lock "nightly" in table schedlock.`) {
		t.Fatalf("resume: %v\n%s\n%s", r.err, r.stderr, r.stdout)
	}
	run = execRun(t, context.Background(), "", "run", "--dsn", path, "--name", "nightly", "--", "touch", marker)
	if run.code != 0 {
		t.Fatalf("run after resume: exit %d, %v", run.code, run.err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatal("the job did not run after resume")
	}
}

// --wait does not wait out a pause, so the skip must not say it waited;
// a lock held elsewhere is waited for and says so.
func TestRunSkipSaysWhatItWaited(t *testing.T) {
	path, l := pausedFile(t)
	if r := runCmd(t, false, nil, "pause", "nightly", "--for", "1h", "--by", "ops-oncall", "--dsn", path, "--yes"); r.err != nil {
		t.Fatal(r.err)
	}
	hold(t, l, "busy", "node-b")
	cases := []struct {
		name, lock, wait string
		want, wantNot    string
		atMost           time.Duration
	}{
		{"paused", "nightly", "8s", `skipped true: lock "nightly" is paused by ops-oncall until `, "waited", 4 * time.Second},
		{"held", "busy", "300ms", `skipped true: lock "busy" is held by node-b until `, "", time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := execRun(t, context.Background(), "", "run", "--dsn", path, "--name", tc.lock, "--wait", tc.wait, "--", "true")
			if r.err == nil || !strings.Contains(r.err.Error(), tc.want) {
				t.Fatalf("run: %v; want %q", r.err, tc.want)
			}
			if tc.wantNot != "" && strings.Contains(r.err.Error(), tc.wantNot) {
				t.Errorf("run: %v; says %q", r.err, tc.wantNot)
			}
			if tc.wantNot == "" && !strings.HasSuffix(r.err.Error(), "(waited "+tc.wait+")") {
				t.Errorf("run: %v; want it to say it waited %s", r.err, tc.wait)
			}
			if r.took > tc.atMost {
				t.Errorf("run took %s", r.took)
			}
		})
	}
}

func TestPauseCreateAndDecline(t *testing.T) {
	path, l := pausedFile(t)
	r := runWithInput(t, true, "n\n", "pause", "new-job", "--for", "1h", "--create", "--dsn", path)
	if !errors.Is(r.err, ErrInterrupted) || !strings.Contains(r.stderr, "before: no row yet") || !strings.Contains(r.stderr, "Pause it? [y/N]") {
		t.Fatalf("declined pause: %v\n%s", r.err, r.stderr)
	}
	if _, found, _ := l.Inspect(context.Background(), "new-job"); found {
		t.Fatal("a declined pause wrote a row")
	}
	r2 := runCmd(t, false, nil, "pause", "new-job", "--until", time.Now().Add(3*time.Hour).UTC().Format(time.RFC3339), "--create", "--by", "alice", "--yes", "--dsn", path)
	if r2.err != nil {
		t.Fatal(r2.err)
	}
	row := rowOf(t, l, "new-job")
	if dialects.TableRowState(row) != dialects.StatePaused || row.Owner != "paused:alice" || time.Until(row.Until) < 170*time.Minute {
		t.Errorf("--create --until: row %+v", row)
	}
	// The library skips it too.
	_, err := l.Acquire(context.Background(), "new-job", dialects.Options{})
	if !errors.Is(err, dialects.ErrPaused) || !errors.Is(err, dialects.ErrHeld) {
		t.Errorf("library acquire of a paused lock: %v", err)
	}
}

// TestPauseByPresetNamesTheTable: a lock paused with --create in a table
// given by --preset alone is reported in that table, with the row as it
// is now, and JSON's after-state is the paused row.
func TestPauseByPresetNamesTheTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks.db")
	openTableLocker(t, path, dialects.Table{Preset: dialects.PresetShedlock})
	r := runCmd(t, false, nil, "pause", "new-job", "--for", "1h", "--create", "--yes", "--dsn", path, "--preset", "shedlock")
	if r.err != nil || !strings.Contains(r.stdout, `Paused lock "new-job" in table shedlock.`) || !strings.Contains(r.stdout, "now: paused") {
		t.Fatalf("pause --preset shedlock --create: %v\n%s", r.err, r.stdout)
	}
	r = runCmd(t, false, nil, "pause", "other-job", "--for", "1h", "--create", "--yes", "--dsn", path, "--preset", "shedlock", "-o", "json")
	var v pauseView
	if err := json.Unmarshal([]byte(r.stdout), &v); r.err != nil || err != nil || v.After == nil || v.After.State != string(dialects.StatePaused) {
		t.Fatalf("pause -o json: %v, %v, after %+v\n%s", r.err, err, v.After, r.stdout)
	}
}

func TestPauseUnsupportedBackendAndPreset(t *testing.T) {
	path, _ := pausedFile(t)
	r := runCmd(t, false, nil, "pause", "nightly", "--for", "1h", "--yes", "--dsn", path, "--preset", "liquibase")
	if ExitCode(r.err) != CodeUsage {
		t.Errorf("pause in Liquibase's table: %v", r.err)
	}
}

// A prompt is not a log record: under --log-format json the question goes
// to stderr as it is, and the declined pause still writes nothing.
func TestPausePromptUnderJSONLog(t *testing.T) {
	path, l := pausedFile(t)
	r := runWithInput(t, true, "n\n", "--log-format", "json", "pause", "new-job", "--for", "1h", "--create", "--dsn", path)
	if !errors.Is(r.err, ErrInterrupted) {
		t.Fatalf("declined pause: %v\n%s", r.err, r.stderr)
	}
	if !strings.Contains(r.stderr, "\nPause it? [y/N] ") && !strings.HasPrefix(r.stderr, "Pause it? [y/N] ") {
		t.Errorf("stderr %q: want the question as it is, not in a JSON record", r.stderr)
	}
	if _, found, _ := l.Inspect(context.Background(), "new-job"); found {
		t.Fatal("a declined pause wrote a row")
	}
}
