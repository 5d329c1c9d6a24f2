//go:build unix

package cmd

import (
	"context"
	"database/sql"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v5"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/schedlock/schedlock/internal/hooks"
	"github.com/schedlock/schedlock/internal/iostreams"
	"github.com/schedlock/schedlock/internal/metrics"
)

// pathRecorder is a hook server that records the paths it is sent and
// answers status (200 when 0).
type pathRecorder struct {
	mu     sync.Mutex
	paths  []string
	status int
}

func (p *pathRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.paths = append(p.paths, r.URL.Path)
	status := p.status
	p.mu.Unlock()
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
}

// take returns the paths seen so far and forgets them.
func (p *pathRecorder) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.paths
	p.paths = nil
	return out
}

func hookServer(t *testing.T, status int) (*pathRecorder, string) {
	t.Helper()
	rec := &pathRecorder{status: status}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	return rec, srv.URL
}

// quickRetries shortens the back-off between hook retries.
func quickRetries(t *testing.T) {
	t.Helper()
	old := hooks.Backoff
	hooks.Backoff = func() backoff.BackOff { return backoff.NewConstantBackOff(10 * time.Millisecond) }
	t.Cleanup(func() { hooks.Backoff = old })
}

// Each outcome of a run pings the path healthchecks.io expects for it,
// and the exit code stays the run's own; no message shows the ping URL's
// secret part.
func TestRunPingURLFollowsHealthchecksPaths(t *testing.T) {
	db, locker := sqliteLocks(t)
	rec, base := hookServer(t, 0)
	const uuid = "5b4f3c2a-0000-4000-8000-000000000001"
	ping := base + "/" + uuid
	hold(t, locker, "held-elsewhere", "other-node")
	cases := []struct {
		name  string
		args  []string
		code  int
		paths []string
	}{
		{"success", []string{"--dsn", db, "--name", "hc-ok", "--", "true"}, 0, []string{"/start", ""}},
		{"failure", []string{"--dsn", db, "--name", "hc-fail", "--", "sh", "-c", "exit 3"}, 3, []string{"/start", "/3"}},
		{"not found", []string{"--dsn", db, "--name", "hc-127", "--", "/no/such/command"}, 127, []string{"/start", "/127"}},
		{"skip", []string{"--dsn", db, "--name", "held-elsewhere", "--skipped-exit-code", "5", "--", "true"}, 5, []string{"/log"}},
		{"no database", []string{"--dsn", filepath.Join(t.TempDir(), "missing.db"), "--name", "hc-nodb", "--", "true"}, CodeError, []string{"/1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"run", "-v", "--ping-url", ping}, c.args...)
			r := execRun(t, context.Background(), "", args...)
			if r.code != c.code {
				t.Fatalf("exit %d (%v), want %d\n%s", r.code, r.err, c.code, r.stderr)
			}
			var want []string
			for _, p := range c.paths {
				want = append(want, "/"+uuid+p)
			}
			if got := rec.take(); !slices.Equal(got, want) {
				t.Errorf("paths %v, want %v", got, want)
			}
			if strings.Contains(r.stderr+errText(r.err), uuid) {
				t.Errorf("the ping URL's UUID is shown:\n%s", r.stderr)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A lease lost while COMMAND runs pings /fail and the --on-lost hook.
func TestRunLostFiresLostHooks(t *testing.T) {
	path, _ := sqliteLocks(t)
	rec, base := hookServer(t, 0)
	started := filepath.Join(t.TempDir(), "started")
	done := runInBackground(t, "run", "--dsn", path, "--name", "lost-job", "--at-most", "3s", "--kill-grace", "200ms",
		"--ping-url", base+"/ping", "--on-lost", base+"/lost", "--", "sh", "-c", "touch "+started+"; exec sleep 60")
	waitForFile(t, started)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("DROP TABLE schedlock"); err != nil {
		t.Fatal(err)
	}
	r := awaitRun(t, done)
	if r.code != CodeLeaseLost {
		t.Fatalf("exit %d (%v), want %d\n%s", r.code, r.err, CodeLeaseLost, r.stderr)
	}
	got := rec.take()
	slices.Sort(got)
	if want := []string{"/lost", "/ping/fail", "/ping/start"}; !slices.Equal(got, want) {
		t.Errorf("paths %v, want %v", got, want)
	}
}

// A hook that fails, or hangs, changes neither the exit code nor the
// run beyond --hook-timeout; each failure is one line.
func TestRunFailingHooksLeaveTheRunAlone(t *testing.T) {
	quickRetries(t)
	db, _ := sqliteLocks(t)
	failing, failingURL := hookServer(t, http.StatusInternalServerError)
	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hung.Close()
	defer close(release)

	marker := filepath.Join(t.TempDir(), "ran")
	// --hook-timeout is long enough for the failing hook's four quick
	// tries on a busy machine; the hung hook still ends at it.
	r := execRun(t, context.Background(), "", "run", "--dsn", db, "--name", "hooks-fail", "--hook-timeout", "5s",
		"--on-start", hung.URL+"/start", "--on-failure", failingURL+"/fail", "--on-failure", "exit 9",
		"--", "sh", "-c", "touch "+marker+"; exit 4")
	if r.code != 4 {
		t.Fatalf("exit %d (%v), want the command's 4\n%s", r.code, r.err, r.stderr)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatal("the command did not run")
	}
	if n := len(failing.take()); n != hooks.MaxTries {
		t.Errorf("the failing hook was tried %d times, want %d", n, hooks.MaxTries)
	}
	if r.took > 60*time.Second {
		t.Errorf("the run took %s with --hook-timeout 5s", r.took)
	}
	var hookLines []string
	for _, l := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
		if strings.Contains(l, " hook ") {
			hookLines = append(hookLines, l)
		}
	}
	if len(hookLines) != 3 {
		t.Fatalf("%d hook lines, want 3 (timed out, answered 500, exited 9):\n%s", len(hookLines), r.stderr)
	}
	joined := strings.Join(hookLines, "\n")
	for _, want := range []string{"--on-start hook POST http://" + strings.TrimPrefix(hung.URL, "http://") + "/xxxxx timed out after 5s", "answered 500 Internal Server Error (4 tries)", "--on-failure hook command exit …", "exited with code 9"} {
		if !strings.Contains(joined, want) {
			t.Errorf("hook lines lack %q:\n%s", want, joined)
		}
	}
}

// Bad hook values are usage errors before anything runs.
func TestRunHookBadInput(t *testing.T) {
	db, _ := sqliteLocks(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--ping-url", "/opt/notify.sh"}, "--ping-url: /opt/notify.sh is not an http:// or https:// URL"},
		{[]string{"--on-success", ""}, "--on-success: empty"},
		{[]string{"--on-lost", "https://"}, "has no host"},
		{[]string{"--hook-timeout", "0s", "--on-start", "true"}, "--hook-timeout must be positive"},
		{[]string{"--jitter", "-5s"}, "--jitter must not be negative, got -5s"},
		{[]string{"--jitter", "1m", "--timeout", "10s"}, "--jitter (1m0s) must be shorter than --timeout (10s)"},
	} {
		marker := filepath.Join(t.TempDir(), "ran")
		args := append(append([]string{"run", "--dsn", db, "--name", "bad"}, c.args...), "--", "touch", marker)
		r := execRun(t, context.Background(), "", args...)
		if r.code != CodeUsage || !strings.Contains(errText(r.err), c.want) {
			t.Errorf("%v: exit %d, %v; want 2 and %q", c.args, r.code, r.err, c.want)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("%v: the command ran", c.args)
		}
	}
}

// --metrics-textfile records every run, skipped ones included, in the
// text format; a directory that does not exist is one line and the job
// still runs with its own exit code.
func TestRunMetricsTextfile(t *testing.T) {
	db, locker := sqliteLocks(t)
	prom := filepath.Join(t.TempDir(), "schedlock.prom")
	run := func(name string, cmd ...string) runResult {
		args := append([]string{"run", "--dsn", db, "--name", name, "--metrics-textfile", prom, "--"}, cmd...)
		return execRun(t, context.Background(), "", args...)
	}
	if r := run("report", "true"); r.code != 0 {
		t.Fatalf("exit %d: %v", r.code, r.err)
	}
	if r := run("report", "sh", "-c", "exit 6"); r.code != 6 {
		t.Fatalf("exit %d: %v", r.code, r.err)
	}
	lease := hold(t, locker, "report", "other-node")
	if r := run("report", "true"); r.code != 0 {
		t.Fatalf("skipped run: exit %d: %v", r.code, r.err)
	}
	_ = lease.Release(context.Background())
	if r := run("cleanup", "true"); r.code != 0 {
		t.Fatalf("exit %d: %v", r.code, r.err)
	}

	f, err := os.Open(prom)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(f)
	if err != nil {
		t.Fatalf("the textfile does not parse: %v", err)
	}
	sample := func(name, lock string) float64 {
		for _, m := range fams[name].GetMetric() {
			if m.GetLabel()[0].GetValue() == lock {
				if fams[name].GetType() == dto.MetricType_COUNTER {
					return m.GetCounter().GetValue()
				}
				return m.GetGauge().GetValue()
			}
		}
		t.Fatalf("%s{lock=%q} is missing", name, lock)
		return 0
	}
	for _, c := range []struct {
		name, lock string
		want       float64
	}{
		{metrics.Runs, "report", 2}, {metrics.Failed, "report", 1}, {metrics.Skipped, "report", 1},
		{metrics.LastExitCode, "report", 6}, {metrics.Lost, "report", 0}, {metrics.Runs, "cleanup", 1},
	} {
		if got := sample(c.name, c.lock); got != c.want {
			t.Errorf("%s{lock=%q} = %v, want %v", c.name, c.lock, got, c.want)
		}
	}
	if end, start := sample(metrics.LastEnd, "report"), sample(metrics.LastStart, "report"); end < start || start < float64(time.Now().Add(-time.Hour).Unix()) {
		t.Errorf("last start %v, end %v", start, end)
	}

	missing := filepath.Join(t.TempDir(), "no-such-dir", "x.prom")
	marker := filepath.Join(t.TempDir(), "ran")
	r := execRun(t, context.Background(), "", "run", "--dsn", db, "--name", "nodir", "--metrics-textfile", missing, "--", "sh", "-c", "touch "+marker+"; exit 2")
	if r.code != 2 {
		t.Errorf("exit %d (%v), want the command's 2", r.code, r.err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Error("the command did not run")
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "directory "+filepath.Dir(missing)+" does not exist") {
		t.Errorf("stderr %q, want one line saying the directory does not exist", r.stderr)
	}
}

// --jitter waits before acquiring, says so with -v, and gives way to
// Ctrl-C: the command does not run and the exit is 130.
func TestRunJitter(t *testing.T) {
	db, _ := sqliteLocks(t)
	r := execRun(t, context.Background(), "", "run", "-v", "--dsn", db, "--name", "jittered", "--jitter", "100ms", "--", "true")
	if r.code != 0 || !strings.Contains(r.stderr, "--jitter 100ms: waiting") {
		t.Errorf("exit %d (%v); stderr %q, want a line about the jitter", r.code, r.err, r.stderr)
	}
	if !strings.Contains(r.stderr, "give --at-least 100ms or more") {
		t.Errorf("no warning that --at-least 0s under --jitter lets a short run run twice: %q", r.stderr)
	}
	r = execRun(t, context.Background(), "", "run", "--dsn", db, "--name", "jittered", "--jitter", "100ms", "--at-least", "1s", "--", "true")
	if r.code != 0 || r.stderr != "" {
		t.Errorf("--jitter 100ms --at-least 1s: exit %d (%v), stderr %q; want 0 and nothing", r.code, r.err, r.stderr)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ios, _, _, _ := iostreams.Test()
	errOut := &syncBuffer{}
	ios.ErrOut = errOut
	f := testFactory(ios, map[string]string{}, t.TempDir())
	marker := filepath.Join(t.TempDir(), "ran")
	done := make(chan error, 1)
	go func() {
		done <- Execute(ctx, f, []string{"run", "-v", "--dsn", db, "--name", "jittered", "--jitter", "1h", "--at-least", "1h", "--at-most", "2h", "--", "touch", marker})
	}()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(errOut.String(), "--jitter 1h0m0s: waiting"); {
		if time.Now().After(deadline) {
			t.Fatalf("no jitter line within 30s: %q", errOut.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if code := ExitCode(err); code != CodeInterrupted {
			t.Errorf("exit %d (%v), want 130", code, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("--jitter 1h did not give way to the interruption")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran after the interruption")
	}
}
