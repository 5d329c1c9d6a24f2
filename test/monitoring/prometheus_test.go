//go:build unix

package monitoring

import (
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/schedlock/schedlock/internal/livetest"
)

// The shipped rules pass promtool's checks and unit tests.
func TestRulesPromtool(t *testing.T) {
	promtool := lookTool(t, "promtool")
	dir := filepath.Join(repoRoot, "deploy", "monitoring")
	for _, args := range [][]string{{"check", "rules", "schedlock-rules.yml"}, {"test", "rules", "schedlock-rules.test.yml"}} {
		c := exec.Command(promtool, args...)
		c.Dir = dir
		if out, err := c.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// lookTool finds a binary of Debian's prometheus (or chromium) package.
// scripts/test.sh installs them: there (a live DSN set) a missing one
// fails the test; run alone without them, the test skips naming the
// package.
func lookTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		pkg := map[string]string{"promtool": "prometheus", "prometheus": "prometheus", "chromium": "chromium"}[name]
		if os.Getenv("SCHEDLOCK_TEST_POSTGRES_DSN") != "" {
			t.Fatalf("%s is not installed (Debian package %s; scripts/test.sh installs it)", name, pkg)
		}
		t.Skipf("%s is not installed (Debian package %s; scripts/test.sh installs it)", name, pkg)
	}
	return p
}

// A real Prometheus scrapes the exporter with the shipped rules; a holder
// killed with SIGKILL shows as the zombie alert, pending, through
// Prometheus' HTTP API.
func TestPrometheusSeesZombie(t *testing.T) {
	pg := livetest.DSN(t, livetest.Postgres)
	prom := lookTool(t, "prometheus")
	name := uniq("exp-zombie")
	runOnce(t, pg, name, "--strategy", "table", "--create-table", "--history", "10", "--at-most", "1h")
	e := startExporter(t, "--dsn", pg, "--cache", "1s")

	dir := t.TempDir()
	rules, err := filepath.Abs(filepath.Join(repoRoot, "deploy", "monitoring", "schedlock-rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	target := strings.TrimPrefix(e.URL, "http://")
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: schedlock
    static_configs:
      - targets: [%q]
`, rules, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	promURL := fmt.Sprintf("http://127.0.0.1:%d", port)
	pc := exec.Command(prom, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port), "--log.level=warn")
	var promLog strings.Builder
	pc.Stdout, pc.Stderr = &promLog, &promLog
	if err := pc.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = pc.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = pc.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = pc.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("prometheus log:\n%s", promLog.String())
		}
	}()
	eventually(t, "Prometheus scrapes the exporter", func() (bool, string) {
		var r struct {
			Data struct {
				Result []json.RawMessage `json:"result"`
			} `json:"data"`
		}
		if err := getJSON(promURL+`/api/v1/query?query=schedlock_up{job="schedlock"}==1`, &r); err != nil {
			return false, err.Error()
		}
		return len(r.Data.Result) == 1, fmt.Sprint(len(r.Data.Result), " results")
	})

	// The holder: a run refreshing its lease, then killed with SIGKILL
	// (its command ends with it).
	h := hold(t, pg, name, "--strategy", "table", "--history", "10", "--at-most", "1h")
	eventually(t, "the lock held in Prometheus", func() (bool, string) {
		var r struct {
			Data struct {
				Result []json.RawMessage `json:"result"`
			} `json:"data"`
		}
		q := fmt.Sprintf(`schedlock_lock_state{lock=%q,state="held"}==1`, name)
		if err := getJSON(promURL+"/api/v1/query?query="+urlQuery(q), &r); err != nil {
			return false, err.Error()
		}
		return len(r.Data.Result) == 1, fmt.Sprint(len(r.Data.Result), " results")
	})
	if err := h.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-h.done
	eventually(t, "SchedlockZombieLock pending or firing for the killed holder's lock", func() (bool, string) {
		var r struct {
			Data struct {
				Alerts []struct {
					Labels map[string]string `json:"labels"`
					State  string            `json:"state"`
				} `json:"alerts"`
			} `json:"data"`
		}
		if err := getJSON(promURL+"/api/v1/alerts", &r); err != nil {
			return false, err.Error()
		}
		for _, a := range r.Data.Alerts {
			if a.Labels["alertname"] == "SchedlockZombieLock" && a.Labels["lock"] == name && (a.State == "pending" || a.State == "firing") {
				return true, ""
			}
		}
		return false, fmt.Sprintf("alerts: %+v", r.Data.Alerts)
	})
	dashboardQueries(t, promURL)
}

// dashboardPanel is a panel of the shipped Grafana dashboard.
type dashboardPanel struct {
	Title   string `json:"title"`
	Type    string `json:"type"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

// dashboardQueries evaluates every query of the shipped Grafana dashboard
// (deploy/monitoring/schedlock-dashboard.json, its variables given their
// "All" values) in the running Prometheus, which must answer each with at
// least one series, and keeps screenshots of Prometheus' own graph page
// showing those queries as artifacts (dashboard-stats-prometheus.png,
// dashboard-graphs-prometheus.png): Prometheus' UI, not Grafana's, which
// no package here provides.
func dashboardQueries(t *testing.T, promURL string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "monitoring", "schedlock-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []dashboardPanel `json:"panels"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	vars := strings.NewReplacer(`"$dsn"`, `".*"`, "$__rate_interval", "1m")
	// Prometheus' classic graph page reads g0 to g9: the stat and table
	// panels go on one page (its table tab), the time series on another
	// (its graph tab).
	pages := map[string][]string{}
	n := 0
	for _, p := range d.Panels {
		for _, target := range p.Targets {
			expr := vars.Replace(target.Expr)
			if strings.Contains(expr, "$") {
				t.Errorf("panel %q: a variable the test does not fill: %s", p.Title, expr)
				continue
			}
			eventually(t, "panel "+p.Title+": "+expr, func() (bool, string) {
				var r struct {
					Status string `json:"status"`
					Data   struct {
						Result []json.RawMessage `json:"result"`
					} `json:"data"`
				}
				if err := getJSON(promURL+"/api/v1/query?query="+url.QueryEscape(expr), &r); err != nil {
					return false, err.Error()
				}
				return r.Status == "success" && len(r.Data.Result) > 0, fmt.Sprintf("%s, %d series", r.Status, len(r.Data.Result))
			})
			page, tab := "dashboard-stats-prometheus.png", "1"
			if p.Type == "timeseries" {
				page, tab = "dashboard-graphs-prometheus.png", "0"
			}
			g := fmt.Sprintf("g%d.", len(pages[page]))
			pages[page] = append(pages[page], g+"expr="+url.QueryEscape(expr)+"&"+g+"tab="+tab+"&"+g+"range_input=30s")
			n++
		}
	}
	if n < 10 {
		t.Fatalf("the dashboard has %d queries", n)
	}
	browser, err := exec.LookPath("chromium")
	if err != nil {
		t.Log("no chromium: no screenshot of the dashboard's queries")
		return
	}
	for name, graphs := range pages {
		if len(graphs) > 10 {
			t.Errorf("%s: %d queries, more than the graph page shows", name, len(graphs))
		}
		path := filepath.Join(artifactsDir(t), name)
		chromium(t, browser, fmt.Sprintf("--window-size=1000,%d", 120+len(graphs)*(map[bool]int{true: 900, false: 400}[strings.Contains(name, "graphs")])),
			"--virtual-time-budget=15000", "--screenshot="+path, promURL+"/graph?"+strings.Join(graphs, "&"))
		// The window is taller than the page, so that focusing the last
		// query scrolls nothing; the blank below the page is cut off.
		trimBlankBottom(t, path)
		if fi, err := os.Stat(path); err != nil || fi.Size() < 10_000 {
			t.Errorf("screenshot %s: %v (%v)", path, err, fi)
			continue
		}
		t.Logf("screenshot kept: %s", path)
	}
}

// trimBlankBottom cuts the white rows off the bottom of the PNG at path.
func trimBlankBottom(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b := img.Bounds()
	last := b.Min.Y
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if r, g, bl, _ := img.At(x, y).RGBA(); r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				last = y
				break
			}
		}
	}
	sub, ok := img.(interface {
		SubImage(image.Rectangle) image.Image
	})
	if !ok {
		return
	}
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if err := png.Encode(out, sub.SubImage(image.Rect(b.Min.X, b.Min.Y, b.Max.X, min(last+16, b.Max.Y)))); err != nil {
		t.Fatal(err)
	}
}

func urlQuery(q string) string {
	r := strings.NewReplacer(" ", "%20", `"`, "%22", "{", "%7B", "}", "%7D", "=", "%3D", ",", "%2C")
	return r.Replace(q)
}

func getJSON(url string, v any) error {
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
