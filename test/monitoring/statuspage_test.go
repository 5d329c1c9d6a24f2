//go:build unix

package monitoring

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/internal/livetest"
)

// artifactsDir is where the browser tests keep their screenshots:
// $SCHEDLOCK_ARTIFACTS, else $TMPDIR/schedlock-artifacts. It is not
// removed after the run.
func artifactsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("SCHEDLOCK_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "schedlock-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// chromium runs headless Chromium with args and returns its stdout.
func chromium(t *testing.T, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(), "--no-first-run", "--disable-extensions"}
	c := exec.CommandContext(ctx, bin, append(base, args...)...)
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	if err := c.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, errOut.String())
	}
	return out.String()
}

var runRE = regexp.MustCompile(`<li class="(run[^"]*)" data-exit="(\d+)">([^<]*)</li>`)

var rowRE = regexp.MustCompile(`<tr class="lock" data-lock="([^"]*)" data-state="([^"]*)">`)

// The status page in a real browser, against live databases: every held
// lock is a row with its state, the database that cannot be read says so,
// and the page has no control that could change a lock. Screenshots at a
// phone's and a desktop's width are kept as artifacts.
func TestStatusPageInChromium(t *testing.T) {
	pg := livetest.DSN(t, livetest.Postgres)
	my := livetest.DSN(t, livetest.MySQL)
	rd := livetest.DSN(t, livetest.Redis)
	browser := lookTool(t, "chromium")
	names := map[string]string{"pg": uniq("billing-nightly"), "mysql": uniq("report-hourly"), "redis": uniq("cache-warmup")}
	runOnce(t, pg, names["pg"], "--strategy", "table", "--create-table", "--history", "10", "--at-most", "30m")
	runOnce(t, pg, names["pg"], "--strategy", "table", "--history", "10", "--at-most", "30m")
	failing := exec.Command(binary, "run", "--dsn", pg, "--name", names["pg"], "--strategy", "table", "--history", "10", "--at-most", "30m", "--", "sh", "-c", "exit 3")
	failing.Env = cleanEnv()
	if out, err := failing.CombinedOutput(); failing.ProcessState == nil || failing.ProcessState.ExitCode() != 3 {
		t.Fatalf("schedlock run -- exit 3: %v\n%s", err, out)
	}
	hold(t, pg, names["pg"], "--strategy", "table", "--at-most", "30m")
	runOnce(t, my, names["mysql"], "--strategy", "table", "--create-table")
	hold(t, my, names["mysql"], "--strategy", "table", "--at-most", "20m")
	hold(t, rd, names["redis"], "--at-most", "15m")
	targets := filepath.Join(t.TempDir(), "targets.yml")
	if err := os.WriteFile(targets, []byte(fmt.Sprintf("targets:\n  - {name: postgres, dsn: %q}\n  - {name: mariadb, dsn: %q}\n  - {name: redis, dsn: %q}\n  - {name: offline, dsn: %q}\n",
		pg, my, rd, fmt.Sprintf("postgres://app@127.0.0.1:%d/jobs", freePort(t)))), 0o600); err != nil {
		t.Fatal(err)
	}
	e := startExporter(t, "--targets", targets, "--cache", "1s")

	var dom string
	eventually(t, "every held lock a row of the rendered page", func() (bool, string) {
		dom = chromium(t, browser, "--dump-dom", e.URL+"/")
		rows := map[string]string{}
		for _, m := range rowRE.FindAllStringSubmatch(dom, -1) {
			rows[html.UnescapeString(m[1])] = m[2]
		}
		for _, n := range names {
			if rows[n] != "held" {
				return false, fmt.Sprintf("%s: %q in %v", n, rows[n], rows)
			}
		}
		return true, ""
	})
	// The PostgreSQL job's three recorded runs, newest first: the one that
	// exited 3, then the two that exited 0 (the run holding the lock now
	// is recorded when it ends).
	pgRow := regexp.MustCompile(`(?s)<tr class="lock" data-lock="` + regexp.QuoteMeta(names["pg"]) + `".*?</tr>`).FindString(dom)
	var exits []string
	for _, m := range runRE.FindAllStringSubmatch(pgRow, -1) {
		exits = append(exits, m[2])
		if !strings.Contains(m[3], "of 30m0s") {
			t.Errorf("run %q does not name its at-most", m[3])
		}
		if (m[2] != "0") != strings.Contains(m[1], "failed") {
			t.Errorf("run %q exit %s has class %q", m[3], m[2], m[1])
		}
	}
	if strings.Join(exits, ",") != "3,0,0" {
		t.Errorf("the PostgreSQL job's runs have exit codes %v, want 3,0,0 newest first:\n%s", exits, pgRow)
	}
	for _, want := range []string{`data-dsn="offline" data-up="false"`, `data-dsn="postgres" data-up="true"`, `data-dsn="mariadb" data-up="true"`, "connect:"} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered page lacks %q", want)
		}
	}
	for _, never := range []string{"<form", "<button", "<input", "<script"} {
		if strings.Contains(dom, never) {
			t.Errorf("the page has %s: it must not be able to change a lock", never)
		}
	}
	dir := artifactsDir(t)
	for _, shot := range []struct{ name, size string }{{"status-page-phone.png", "412,1400"}, {"status-page-desktop.png", "1280,900"}} {
		path := filepath.Join(dir, shot.name)
		chromium(t, browser, "--window-size="+shot.size, "--screenshot="+path, e.URL+"/")
		fi, err := os.Stat(path)
		if err != nil || fi.Size() < 10_000 {
			t.Errorf("screenshot %s: %v (%v bytes)", path, err, fi)
			continue
		}
		t.Logf("screenshot kept: %s", path)
	}
}
