package cmd

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/iostreams"
	"github.com/schedlock/schedlock/internal/output"
)

// shedRow reads a ShedLock row: owner and lease end as stored.
func shedRow(t *testing.T, db *sql.DB, name string) (owner, until string) {
	t.Helper()
	if err := db.QueryRow(`SELECT locked_by, lock_until FROM shedlock WHERE name = ?`, name).Scan(&owner, &until); err != nil {
		t.Fatal(err)
	}
	return owner, until
}

// liveLease reports whether the row's lease runs past the database's now.
func liveLease(t *testing.T, db *sql.DB, name string) bool {
	t.Helper()
	var live bool
	if err := db.QueryRow(`SELECT lock_until > strftime('%Y-%m-%d %H:%M:%f', 'now') FROM shedlock WHERE name = ?`, name).Scan(&live); err != nil {
		t.Fatal(err)
	}
	return live
}

func TestUnlockRefusals(t *testing.T) {
	path, db := lockFile(t)
	_, untilBefore := shedRow(t, db, "held-job")
	cases := []struct {
		name  string
		tty   bool
		args  []string
		code  int
		wants []string
	}{
		{"no terminal, no --yes", false, []string{"held-job", "--owner", "host-a"}, CodeUsage, []string{`refusing to unlock "held-job" without confirmation: not a terminal; pass --yes`}},
		// --yes would not free these either: that answer comes first.
		{"no terminal, no --yes, live lease", false, []string{"held-job"}, CodeNegative, []string{`refused: lock "held-job" in table shedlock is held by "host-a" until `, "--force"}},
		{"no terminal, no --yes, not held", false, []string{"dead-job"}, CodeNegative, []string{`lock "dead-job" is not held`}},
		{"force with owner", true, []string{"held-job", "--force", "--owner", "host-a"}, CodeUsage, []string{"--force and --owner exclude each other"}},
		{"kill-session with force", true, []string{"held-job", "--kill-session", "--force"}, CodeUsage, []string{"--kill-session terminates the session"}},
		{"no name", true, []string{}, CodeUsage, []string{"unlock takes one lock name, got 0 arguments"}},
		{"unknown preset", false, []string{"held-job", "--yes", "--preset", "quartz"}, CodeUsage, []string{"use one of schedlock, shedlock, sys_sched_lock, liquibase"}},
		{"expired", false, []string{"dead-job", "--yes"}, CodeNegative, []string{`lock "dead-job" is not held: its lease in table shedlock ended at`, "(last owner host-b)"}},
		{"unknown name", false, []string{"no-such-job", "--yes"}, CodeNegative, []string{`lock "no-such-job" is not held`}},
		{"another owner", false, []string{"held-job", "--yes", "--owner", "host-z"}, CodeNegative, []string{`refused: lock "held-job" is held by "host-a", not by "host-z"; nothing changed`}},
		{"live lease, no --owner", false, []string{"held-job", "--yes"}, CodeNegative, []string{`refused: lock "held-job" in table shedlock is held by "host-a" until `, "(in ", "nothing changed", "--owner host-a", "--force"}},
		{"live lease, dry run", false, []string{"held-job", "--dry-run"}, CodeNegative, []string{`is held by "host-a" until `, "--force"}},
		{"live lease, at the prompt", true, []string{"held-job"}, CodeNegative, []string{`is held by "host-a" until `, "--force"}},
		{"Liquibase, no --owner", false, []string{"liquibase", "--yes"}, CodeNegative, []string{`refused: lock "liquibase" in table DATABASECHANGELOGLOCK is held by "build-7 (10.0.0.5)" since `, "with no lease end", `--owner 'build-7 (10.0.0.5)'`, "--force"}},
		{"no session locks on SQLite", false, []string{"held-job", "--yes", "--kill-session"}, CodeNegative, []string{`lock "held-job" is not held as a session lock; it is held in table shedlock: unlock it without --kill-session`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runWithInput(t, tc.tty, "", append([]string{"unlock", "--dsn", path}, tc.args...)...)
			if got := ExitCode(r.err); got != tc.code {
				t.Fatalf("exit code %d, want %d (error %v)", got, tc.code, r.err)
			}
			for _, w := range tc.wants {
				if !strings.Contains(r.err.Error(), w) {
					t.Errorf("error %q does not say %q", r.err, w)
				}
			}
			if msg := r.err.Error(); strings.Contains(msg, "\n") || len(msg) > 300 {
				t.Errorf("the refusal is not one short line (%d bytes): %q", len(msg), msg)
			}
			if r.stdout != "" || r.stderr != "" {
				t.Errorf("a refusal printed %q / %q", r.stdout, r.stderr)
			}
			if owner, until := shedRow(t, db, "held-job"); owner != "host-a" || until != untilBefore {
				t.Errorf("held-job changed: %s until %s", owner, until)
			}
			var locked int
			if err := db.QueryRow(`SELECT LOCKED FROM DATABASECHANGELOGLOCK WHERE ID = 1`).Scan(&locked); err != nil || locked != 1 {
				t.Errorf("Liquibase's lock changed: LOCKED=%d %v", locked, err)
			}
		})
	}
}

func TestUnlockSessionRefusalNamesTheWholeHolder(t *testing.T) {
	since := time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC)
	long := strings.Repeat("n", 100)
	cases := []struct {
		name    string
		lock    string
		holder  dialects.Holder
		wants   []string
		wantNot string
	}{
		{"holder over the argument limit", "nightly-report-export",
			dialects.Holder{SessionID: "23213", User: "pwuser", Client: "192.168.100.200", Application: "schedlock run nightly-report-export", Since: since},
			[]string{"held by session 23213: pwuser@192.168.100.200, schedlock run nightly-report-export, since ", "; only ending that session frees it: add --kill-session"}, "bytes)"},
		{"long lock name is still cut", long,
			dialects.Holder{SessionID: "7", User: "app", Since: since},
			[]string{"(100 bytes)", "held by session 7: app, since "}, long},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.holder
			o := &UnlockOptions{Name: tc.lock}
			_, err := o.plan(&dialects.Listing{Locks: []dialects.LockEntry{{
				Name: tc.lock, State: dialects.StateHeld, Strategy: dialects.StrategySession, Source: "pg_locks", Holder: &h,
			}}}, false)
			if got := ExitCode(err); got != CodeNegative {
				t.Fatalf("exit code %d, want %d (error %v)", got, CodeNegative, err)
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), tc.wantNot) {
				t.Errorf("error %q says %q", err, tc.wantNot)
			}
		})
	}
}

func TestUnlockDryRunChangesNothing(t *testing.T) {
	path, db := lockFile(t)
	_, untilBefore := shedRow(t, db, "held-job")
	r := runWithInput(t, false, "", "unlock", "held-job", "--dsn", path, "--owner", "host-a", "--dry-run")
	if r.err != nil {
		t.Fatal(r.err)
	}
	for _, w := range []string{
		`Lock "held-job" in table shedlock (shedlock):`,
		"  before: held, owner host-a, locked at ",
		"  after:  expired, owner host-a, locked at ",
		`  guard:  only while "host-a" still holds it`,
		"Nothing changed (--dry-run).",
	} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("dry run does not say %q:\n%s", w, r.stdout)
		}
	}
	if owner, until := shedRow(t, db, "held-job"); owner != "host-a" || until != untilBefore || !liveLease(t, db, "held-job") {
		t.Errorf("--dry-run changed the row: %s until %s", owner, until)
	}

	r = runWithInput(t, false, "", "unlock", "liquibase", "--dsn", path, "--dry-run", "--force", "-o", "json")
	if r.err != nil {
		t.Fatal(r.err)
	}
	var v struct {
		Action  string         `json:"action"`
		DryRun  bool           `json:"dry_run"`
		Changed bool           `json:"changed"`
		Before  map[string]any `json:"before"`
		After   map[string]any `json:"after"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if v.Action != "force-release" || !v.DryRun || v.Changed || v.Before["state"] != "held" || v.Before["owner"] != "build-7 (10.0.0.5)" || v.After["state"] != "free" || v.After["owner"] != nil {
		t.Errorf("dry run JSON: %+v", v)
	}
	var locked int
	if err := db.QueryRow(`SELECT LOCKED FROM DATABASECHANGELOGLOCK WHERE ID = 1`).Scan(&locked); err != nil || locked != 1 {
		t.Errorf("--dry-run changed Liquibase's lock: LOCKED=%d %v", locked, err)
	}
}

func TestUnlockPrompt(t *testing.T) {
	for _, answer := range []string{"n\n", "\n", "", "nope\n"} {
		path, db := lockFile(t)
		r := runWithInput(t, true, answer, "unlock", "held-job", "--dsn", path, "--owner", "host-a")
		if ExitCode(r.err) != CodeInterrupted || !strings.Contains(r.err.Error(), "declined; nothing changed") {
			t.Errorf("answer %q: %v", answer, r.err)
		}
		if !strings.Contains(r.stderr, `Lock "held-job" in table shedlock (shedlock):`) || !strings.HasSuffix(strings.TrimSpace(r.stderr), "Release it? [y/N]") {
			t.Errorf("answer %q: prompt %q", answer, r.stderr)
		}
		if !liveLease(t, db, "held-job") || r.stdout != "" {
			t.Errorf("answer %q changed the lock or printed %q", answer, r.stdout)
		}
	}
	for _, answer := range []string{"y\n", "YES\n"} {
		path, db := lockFile(t)
		r := runWithInput(t, true, answer, "unlock", "held-job", "--dsn", path, "--owner", "host-a")
		if r.err != nil {
			t.Fatalf("answer %q: %v", answer, r.err)
		}
		if liveLease(t, db, "held-job") {
			t.Errorf("answer %q: still held", answer)
		}
		if owner, _ := shedRow(t, db, "held-job"); owner != "host-a" {
			t.Errorf("the release changed the owner to %q", owner)
		}
		for _, w := range []string{`Released lock "held-job" in table shedlock.`, "  before: held, owner host-a", "  after:  expired, owner host-a"} {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("answer %q: output lacks %q:\n%s", answer, w, r.stdout)
			}
		}
	}
}

func TestUnlockYesAndForce(t *testing.T) {
	path, db := lockFile(t)
	r := runWithInput(t, false, "", "unlock", "held-job", "--dsn", path, "--yes", "--owner", "host-a", "-o", "json")
	if r.err != nil {
		t.Fatal(r.err)
	}
	var v struct {
		Action  string         `json:"action"`
		Changed bool           `json:"changed"`
		Before  map[string]any `json:"before"`
		After   map[string]any `json:"after"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if v.Action != "release" || !v.Changed || v.Before["state"] != "held" || v.After["state"] != "expired" || v.After["owner"] != "host-a" {
		t.Errorf("JSON: %+v", v)
	}
	if liveLease(t, db, "held-job") {
		t.Error("still held after --yes")
	}
	// A second unlock finds nothing to do.
	if r := runWithInput(t, false, "", "unlock", "held-job", "--dsn", path, "--yes"); ExitCode(r.err) != CodeNegative || !strings.Contains(r.err.Error(), "not held") {
		t.Errorf("second unlock: %v", r.err)
	}

	// --force: whoever holds it.
	if _, err := db.Exec(`UPDATE shedlock SET lock_until = strftime('%Y-%m-%d %H:%M:%f', 'now', '+1 hours'), locked_by = 'host-q' WHERE name = 'held-job'`); err != nil {
		t.Fatal(err)
	}
	r = runWithInput(t, false, "", "unlock", "held-job", "--dsn", path, "--yes", "--force", "--table", "shedlock")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if liveLease(t, db, "held-job") || !strings.Contains(r.stdout, "before: held, owner host-q") {
		t.Errorf("--force did not release:\n%s", r.stdout)
	}

	// Liquibase: guarded like the rest.
	r = runWithInput(t, false, "", "unlock", "liquibase", "--dsn", path, "--yes", "--owner", "build-7 (10.0.0.5)")
	if r.err != nil {
		t.Fatal(r.err)
	}
	var locked int
	var by sql.NullString
	if err := db.QueryRow(`SELECT LOCKED, LOCKEDBY FROM DATABASECHANGELOGLOCK WHERE ID = 1`).Scan(&locked, &by); err != nil || locked != 0 || by.Valid {
		t.Errorf("Liquibase lock after unlock: LOCKED=%d LOCKEDBY=%v %v", locked, by, err)
	}
	if !strings.Contains(r.stdout, `Released lock "liquibase" in table DATABASECHANGELOGLOCK.`) || !strings.Contains(r.stdout, "after:  free") {
		t.Errorf("output:\n%s", r.stdout)
	}
}

// runUnlockHooked runs unlock with a hook between the confirmation and the
// change.
func runUnlockHooked(t *testing.T, path string, hook func(ctx context.Context, db dialects.LockBreaker), args ...string) cmdResult {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	f := testFactory(ios, map[string]string{}, t.TempDir())
	g := &GlobalOptions{DSN: path, Format: output.Table}
	c := NewCmdUnlock(f, g, func(ctx context.Context, o *UnlockOptions) error {
		o.beforeChange = hook
		return unlockRun(ctx, o)
	})
	c.SetArgs(args)
	c.SetIn(ios.In)
	c.SetOut(ios.Out)
	c.SetErr(ios.ErrOut)
	c.SilenceErrors, c.SilenceUsage = true, true
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := c.ExecuteContext(ctx)
	return cmdResult{stdout: out.String(), stderr: errOut.String(), err: err}
}

func TestUnlockRefusesWhenTheOwnerChangedInBetween(t *testing.T) {
	path, db := lockFile(t)
	takeOver := func(ctx context.Context, _ dialects.LockBreaker) {
		if _, err := db.ExecContext(ctx, `UPDATE shedlock SET locked_by = 'host-c', locked_at = strftime('%Y-%m-%d %H:%M:%f', 'now') WHERE name = 'held-job'`); err != nil {
			t.Error(err)
		}
	}
	r := runUnlockHooked(t, path, takeOver, "held-job", "--yes", "--owner", "host-a")
	if ExitCode(r.err) != CodeNegative || !strings.Contains(r.err.Error(), `refused: lock "held-job" changed hands before the change: now held by "host-c", not "host-a"; nothing changed`) {
		t.Fatalf("error %v", r.err)
	}
	if owner, _ := shedRow(t, db, "held-job"); owner != "host-c" || !liveLease(t, db, "held-job") {
		t.Errorf("the new holder's lock was touched: owner %s, live %v", owner, liveLease(t, db, "held-job"))
	}

	// Released by its holder in between: nothing left to do.
	path, db = lockFile(t)
	release := func(ctx context.Context, _ dialects.LockBreaker) {
		if _, err := db.ExecContext(ctx, `UPDATE shedlock SET lock_until = strftime('%Y-%m-%d %H:%M:%f', 'now') WHERE name = 'held-job'`); err != nil {
			t.Error(err)
		}
	}
	r = runUnlockHooked(t, path, release, "held-job", "--yes", "--owner", "host-a")
	if ExitCode(r.err) != CodeNegative || !strings.Contains(r.err.Error(), "is not held any more") {
		t.Errorf("released in between: %v", r.err)
	}

	// Liquibase: another owner took it in between.
	path, db = lockFile(t)
	relock := func(ctx context.Context, _ dialects.LockBreaker) {
		if _, err := db.ExecContext(ctx, `UPDATE DATABASECHANGELOGLOCK SET LOCKEDBY = 'build-8 (10.0.0.6)' WHERE ID = 1`); err != nil {
			t.Error(err)
		}
	}
	r = runUnlockHooked(t, path, relock, "liquibase", "--yes", "--owner", "build-7 (10.0.0.5)")
	if ExitCode(r.err) != CodeNegative || !strings.Contains(r.err.Error(), `now held by "build-8 (10.0.0.6)", not "build-7 (10.0.0.5)"`) {
		t.Errorf("Liquibase changed hands in between: %v", r.err)
	}
	var locked int
	if err := db.QueryRow(`SELECT LOCKED FROM DATABASECHANGELOGLOCK WHERE ID = 1`).Scan(&locked); err != nil || locked != 1 {
		t.Errorf("the new Liquibase holder's lock was cleared: %d %v", locked, err)
	}
}

func TestUnlockNativeTokenGuard(t *testing.T) {
	ctx := context.Background()
	path, _ := lockFile(t)
	target, err := resolveAdminDSN(testFactory(nil, map[string]string{}, ""), &GlobalOptions{DSN: path}, "test")
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlBackend(target.Connect(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tl, err := db.TableLocker(dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	running, err := tl.Acquire(ctx, "sync", dialects.Options{AtMost: time.Hour, Owner: "worker-1"})
	if err != nil {
		t.Fatal(err)
	}
	// A running job's lease: refused without --owner, and the job keeps it.
	r := runWithInput(t, false, "", "unlock", "sync", "--dsn", path, "--yes")
	if ExitCode(r.err) != CodeNegative || !strings.Contains(r.err.Error(), `is held by "worker-1" until `) {
		t.Fatalf("unlock of a running job's lease: %v", r.err)
	}
	if err := running.Refresh(ctx); err != nil {
		t.Fatalf("the running job lost its lease to a refused unlock: %v", err)
	}
	// The same owner acquires again in between: a new token, so the
	// release read with the old one is refused.
	again := func(ctx context.Context, _ dialects.LockBreaker) {
		if ok, err := tl.Expire(ctx, "sync"); err != nil || !ok {
			t.Errorf("expire: %v %v", ok, err)
		}
		if _, err := tl.Acquire(ctx, "sync", dialects.Options{AtMost: time.Hour, Owner: "worker-1"}); err != nil {
			t.Error(err)
		}
	}
	r = runUnlockHooked(t, path, again, "sync", "--yes", "--table", "schedlock", "--owner", "worker-1")
	if ExitCode(r.err) != CodeNegative || !strings.Contains(r.err.Error(), `refused: lock "sync" was acquired again by "worker-1" (token 2, read with token 1); nothing changed`) {
		t.Fatalf("error %v", r.err)
	}
	row, found, err := tl.Inspect(ctx, "sync")
	if err != nil || !found || row.Expired() || row.Token != 2 {
		t.Errorf("the new lease was touched: %+v %v %v", row, found, err)
	}
}

func TestUnlockReportGolden(t *testing.T) {
	locks := sampleLocks()
	plans := map[string]*unlockPlan{
		"release":      {action: actionRelease, lock: locks[5], table: dialects.Table{Preset: dialects.PresetSchedlock, Name: "schedlock"}, owner: locks[5].Owner},
		"force":        {action: actionForceRelease, lock: locks[2], table: dialects.Table{Preset: dialects.PresetLiquibase, Name: "DATABASECHANGELOGLOCK"}},
		"kill-session": {action: actionKillSession, lock: locks[3]},
	}
	cases := []struct {
		file, plan string
		format     output.Format
		dryRun     bool
	}{
		{"unlock.release.dry-run.golden", "release", output.Table, true},
		{"unlock.release.golden", "release", output.Table, false},
		{"unlock.release.json.golden", "release", output.JSON, false},
		{"unlock.force.dry-run.golden", "force", output.Table, true},
		{"unlock.kill-session.dry-run.golden", "kill-session", output.Table, true},
		{"unlock.kill-session.golden", "kill-session", output.Table, false},
		{"unlock.kill-session.yaml.golden", "kill-session", output.YAML, true},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			ios, _, out, _ := iostreams.Test()
			o := &UnlockOptions{IO: ios, Factory: testFactory(ios, nil, ""), Global: &GlobalOptions{Format: tc.format}, Name: "x", DryRun: tc.dryRun}
			p := plans[tc.plan]
			after := predictAfter(p)
			if !tc.dryRun && p.action == actionRelease {
				after[0].Until = after[0].DBNow.Add(3 * time.Millisecond)
				after[0].DBNow = after[0].Until
			}
			if err := o.report(p, after, !tc.dryRun); err != nil {
				t.Fatal(err)
			}
			goldenFile(t, tc.file, out.Bytes())
		})
	}
}
