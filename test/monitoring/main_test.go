//go:build unix

// Package monitoring runs the built `schedlock exporter` against live
// servers: its metrics and bad input, a real Prometheus loading the shipped
// rules (deploy/monitoring) that sees a killed holder's zombie alert, and
// the status page in headless Chromium, whose screenshots are kept as
// artifacts of the run ($SCHEDLOCK_ARTIFACTS, else
// $TMPDIR/schedlock-artifacts).
package monitoring

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/schedlock/schedlock/internal/testbin"
)

// binary is the schedlock built for this test run.
var binary string

func TestMain(m *testing.M) { testbin.Main(m, filepath.Join("..", ".."), &binary) }

// repoRoot is the repository, for deploy/monitoring.
var repoRoot = filepath.Join("..", "..")

// exporterProc is a running `schedlock exporter`.
type exporterProc struct {
	URL    string // http://127.0.0.1:PORT
	cmd    *exec.Cmd
	mu     sync.Mutex
	stderr bytes.Buffer
	done   chan struct{}
}

// Stderr is what the exporter has logged so far.
func (p *exporterProc) Stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

var servingRE = regexp.MustCompile(`serving url=(https?://[0-9.:]+)/`)

// startExporter runs `schedlock exporter` on a free loopback port with
// args, waits until it serves, and stops it with SIGTERM at the end of the
// test, which must end it with exit code 0.
func startExporter(t *testing.T, args ...string) *exporterProc {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"exporter", "--web.listen-address", "127.0.0.1:0"}, args...)...)
	cmd.Env = cleanEnv()
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &exporterProc{cmd: cmd, done: make(chan struct{})}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.stderr.WriteString(line + "\n")
			p.mu.Unlock()
			if m := servingRE.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	go func() { _ = cmd.Wait(); pw.Close(); close(p.done) }()
	select {
	case p.URL = <-found:
	case <-p.done:
		t.Fatalf("exporter exited before serving (%v):\n%s", cmd.ProcessState, p.Stderr())
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("exporter does not serve after 60s:\n%s", p.Stderr())
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(60 * time.Second):
			_ = cmd.Process.Kill()
			<-p.done
			t.Errorf("exporter still running 60s after SIGTERM:\n%s", p.Stderr())
			return
		}
		if code := cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("exporter exited %d after SIGTERM, want 0:\n%s", code, p.Stderr())
		}
	})
	return p
}

// cleanEnv is the environment without the SCHEDLOCK_ variables of the
// test run's own (SCHEDLOCK_DSN would add a database).
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "SCHEDLOCK_") || strings.HasPrefix(kv, "DATABASE_URL=") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// metrics scrapes url's /metrics.
func metrics(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("scrape: %s %s", resp.Status, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return mfs
}

// value is the value of the first series of family name whose labels
// include want.
func value(mfs map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	mf := mfs[name]
	if mf == nil {
		return 0, false
	}
next:
	for _, m := range mf.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		switch {
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		}
	}
	return 0, false
}

// labelsOf returns the label sets of family name whose labels include want.
func labelsOf(mfs map[string]*dto.MetricFamily, name string, want map[string]string) []map[string]string {
	var out []map[string]string
	mf := mfs[name]
	if mf == nil {
		return nil
	}
next:
	for _, m := range mf.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		out = append(out, got)
	}
	return out
}

// eventually polls cond every 200ms for up to 90s: speed is not what
// these tests assert.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	last := ""
	for time.Now().Before(deadline) {
		ok, why := cond()
		if ok {
			return
		}
		last = why
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: not within 90s; last: %s", what, last)
}

// holder is a `schedlock run` holding a lock with a command that ends
// when run does.
type holder struct {
	cmd  *exec.Cmd
	done chan struct{}
	out  bytes.Buffer
}

// hold starts `schedlock run --dsn dsn --name name args… -- sh -c 'wait
// for run to go'` and stops it with SIGTERM at the end of the test.
func hold(t *testing.T, dsn, name string, args ...string) *holder {
	t.Helper()
	all := append([]string{"run", "--dsn", dsn, "--name", name}, args...)
	all = append(all, "--", "sh", "-c", `while kill -0 "$PPID" 2>/dev/null; do sleep 0.2; done`)
	h := &holder{cmd: exec.Command(binary, all...), done: make(chan struct{})}
	h.cmd.Env = cleanEnv()
	h.cmd.Stdout, h.cmd.Stderr = &h.out, &h.out
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = h.cmd.Wait(); close(h.done) }()
	t.Cleanup(func() {
		_ = h.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-h.done:
		case <-time.After(30 * time.Second):
			_ = h.cmd.Process.Kill()
			<-h.done
		}
	})
	return h
}

// runOnce runs `schedlock run … -- true` and fails t when it fails.
func runOnce(t *testing.T, dsn, name string, args ...string) {
	t.Helper()
	c := exec.Command(binary, append(append([]string{"run", "--dsn", dsn, "--name", name}, args...), "--", "true")...)
	c.Env = cleanEnv()
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("schedlock run %s: %v\n%s", name, err, out)
	}
}

// freePort is a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// uniq is a name no other test run uses.
func uniq(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), time.Now().UnixNano()%1e9)
}

// runExporter runs `schedlock exporter args…` to its end (bad input) and
// returns its exit code and stderr.
func runExporter(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, binary, append([]string{"exporter"}, args...)...)
	c.Env = cleanEnv()
	var stderr bytes.Buffer
	c.Stderr = &stderr
	err := c.Run()
	if ctx.Err() != nil {
		t.Fatalf("exporter %v did not exit: %s", args, stderr.String())
	}
	if err != nil && c.ProcessState == nil {
		t.Fatal(err)
	}
	return c.ProcessState.ExitCode(), stderr.String()
}
