//go:build unix

package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/iostreams"
	"github.com/schedlock/schedlock/internal/metrics"
)

// execRunEnv is execRun with env as the whole environment.
func execRunEnv(t *testing.T, env map[string]string, args ...string) runResult {
	t.Helper()
	ios, _, _, _ := iostreams.Test()
	out, errOut := &syncBuffer{}, &syncBuffer{}
	ios.Out, ios.ErrOut = out, errOut
	f := testFactory(ios, env, t.TempDir())
	start := time.Now()
	err := Execute(context.Background(), f, args)
	return runResult{stdout: out.String(), stderr: errOut.String(), err: err, code: ExitCode(err), took: time.Since(start)}
}

func TestRunMaxRuntimeBadInput(t *testing.T) {
	db, locker := sqliteLocks(t)
	cases := []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"zero", nil, []string{"--max-runtime", "0"}},
		{"zero ISO", nil, []string{"--max-runtime", "PT0S"}},
		{"negative", nil, []string{"--max-runtime", "-5s"}},
		{"zero from the environment", map[string]string{"SCHEDLOCK_MAX_RUNTIME": "0s"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := tc.env
			if env == nil {
				env = map[string]string{}
			}
			args := append(append([]string{"run", "--dsn", db, "--name", "bad"}, tc.args...), "--", "true")
			r := execRunEnv(t, env, args...)
			if r.code != CodeUsage {
				t.Fatalf("exit %d (%v), want %d", r.code, r.err, CodeUsage)
			}
			if msg := r.err.Error(); !strings.Contains(msg, "--max-runtime must be positive") || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line on --max-runtime", msg)
			}
			assertFree(t, locker, "bad")
		})
	}
	r := execRunEnv(t, map[string]string{}, "run", "--dsn", db, "--name", "bad", "--max-runtime", "soon", "--", "true")
	if r.code != CodeUsage {
		t.Errorf("--max-runtime soon: exit %d (%v), want %d", r.code, r.err, CodeUsage)
	}
}

// A command that ignores SIGTERM runs past --max-runtime (given as an ISO
// 8601 duration in the environment): it is stopped with SIGKILL after
// --kill-grace, the lock is released, run exits 124, the failure hook is
// told why, and the textfile metrics and the run history count it.
func TestRunMaxRuntimeStopsCommand(t *testing.T) {
	db, locker := sqliteLocks(t)
	dir := t.TempDir()
	prom, hookOut := filepath.Join(dir, "runs.prom"), filepath.Join(dir, "hook")
	hook := `printf '%s|%s|%s' "$SCHEDLOCK_EVENT" "$SCHEDLOCK_EXIT_CODE" "$SCHEDLOCK_REASON" > ` + hookOut
	r := execRunEnv(t, map[string]string{"SCHEDLOCK_MAX_RUNTIME": "PT1S"},
		"run", "--dsn", db, "--name", "hung", "--create-table", "--history", "5", "--at-most", "1h", "--kill-grace", "500ms",
		"--metrics-textfile", prom, "--on-failure", hook, "--on-lost", "echo lost > "+hookOut+".lost",
		"--", "sh", "-c", `trap '' TERM; sleep 60`)
	if r.code != CodeMaxRuntime {
		t.Fatalf("exit %d (%v), want %d; stderr: %s", r.code, r.err, CodeMaxRuntime, r.stderr)
	}
	if msg := r.err.Error(); !strings.Contains(msg, "ran past --max-runtime 1s") || !strings.Contains(msg, `lock "hung" released`) {
		t.Errorf("error %q", msg)
	}
	if r.took > 20*time.Second {
		t.Errorf("run took %s: the command was not stopped", r.took)
	}
	assertFree(t, locker, "hung")

	got, err := os.ReadFile(hookOut)
	if want := "failure|124|sh ran past --max-runtime 1s and was stopped"; err != nil || string(got) != want {
		t.Errorf("failure hook wrote %q (%v), want %q", got, err, want)
	}
	if _, err := os.Stat(hookOut + ".lost"); err == nil {
		t.Error("the lost hook ran for a run stopped at --max-runtime")
	}

	text, err := os.ReadFile(prom)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{metrics.MaxRuntime + `{lock="hung"} 1`, metrics.LastExitCode + `{lock="hung"} 124`, metrics.Failed + `{lock="hung"} 1`, metrics.Lost + `{lock="hung"} 0`} {
		if !strings.Contains(string(text), want+"\n") {
			t.Errorf("metrics lack %q:\n%s", want, text)
		}
	}

	h, err := locker.(dialects.RunHistorian).RunHistory()
	if err != nil {
		t.Fatal(err)
	}
	runs, err := h.Runs(context.Background(), "hung", 5)
	if err != nil || len(runs) != 1 || runs[0].ExitCode != CodeMaxRuntime {
		t.Fatalf("history %+v, %v: want one run with exit %d", runs, err, CodeMaxRuntime)
	}

	// A command that ends in time is not touched.
	r = execRunEnv(t, map[string]string{"SCHEDLOCK_MAX_RUNTIME": "PT1M"}, "run", "--dsn", db, "--name", "quick", "--", "true")
	if r.err != nil {
		t.Fatalf("quick run: %v", r.err)
	}
}

// On the session strategy --at-most bounds nothing: a --max-runtime past
// it is warned of. On a lease, which run refreshes, it is not.
func TestRunMaxRuntimeWarnsWithoutRefresh(t *testing.T) {
	raw := liveSessionDSN(t)
	const warning = "--max-runtime 2s exceeds --at-most 1s"
	r := execRunEnv(t, map[string]string{}, "run", "--dsn", raw, "--strategy", "session", "--name", "maxruntime-warn", "--at-most", "1s", "--max-runtime", "2s", "--", "true")
	if r.err != nil || !strings.Contains(r.stderr, warning) || !strings.Contains(r.stderr, "session strategy has no lease to refresh") {
		t.Errorf("session: %v; stderr %q lacks the warning", r.err, r.stderr)
	}
	db, _ := sqliteLocks(t)
	r = execRunEnv(t, map[string]string{}, "run", "--dsn", db, "--name", "maxruntime-warn", "--at-most", "3s", "--kill-grace", "1s", "--max-runtime", "4s", "--", "true")
	if r.err != nil || strings.Contains(r.stderr, "exceeds --at-most") {
		t.Errorf("table: %v; stderr %q", r.err, r.stderr)
	}
}
