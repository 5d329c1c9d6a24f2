package hooks

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/schedlock/schedlock/internal/output"
)

// request is one request a test server saw.
type request struct {
	method, path string
	body         Payload
}

// recorder is a test server that records requests and answers with the
// statuses given, one per request (200 once they run out).
type recorder struct {
	mu       sync.Mutex
	requests []request
	statuses []int
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var p Payload
	b, _ := io.ReadAll(req.Body)
	_ = json.Unmarshal(b, &p)
	r.mu.Lock()
	r.requests = append(r.requests, request{req.Method, req.URL.Path, p})
	status := http.StatusOK
	if len(r.statuses) > 0 {
		status, r.statuses = r.statuses[0], r.statuses[1:]
	}
	r.mu.Unlock()
	w.WriteHeader(status)
}

func (r *recorder) seen() []request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]request(nil), r.requests...)
}

// lines collects what a Set says.
type lines struct {
	mu   sync.Mutex
	text []string
}

func (l *lines) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.text = append(l.text, s)
}

func (l *lines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.text...)
}

// fastBackoff shortens the back-off for the test.
func fastBackoff(t *testing.T) {
	t.Helper()
	old := Backoff
	Backoff = func() backoff.BackOff { return backoff.NewConstantBackOff(10 * time.Millisecond) }
	t.Cleanup(func() { Backoff = old })
}

func mustParse(t *testing.T, raw string, ping bool) Hook {
	t.Helper()
	h, err := Parse(raw, ping)
	if err != nil {
		t.Fatal(err)
	}
	h.Flag = "--test"
	return h
}

// Each event extends a ping URL as healthchecks.io documents, and the
// body names the event, the lock and (for the end events) the exit code.
func TestPingURLPathPerEvent(t *testing.T) {
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	var warned lines
	set := &Set{Warn: warned.add}
	ping := mustParse(t, srv.URL+"/ping/5b4f3c2a-uuid", true)
	for _, ev := range Events {
		set.Add(ev, ping)
	}
	started := time.Now()
	cases := []struct {
		ev   Event
		code int
		path string
	}{
		{Start, 0, "/ping/5b4f3c2a-uuid/start"},
		{Success, 0, "/ping/5b4f3c2a-uuid"},
		{Failure, 3, "/ping/5b4f3c2a-uuid/3"},
		{Lost, 113, "/ping/5b4f3c2a-uuid/fail"},
		{Skip, 0, "/ping/5b4f3c2a-uuid/log"},
	}
	for _, c := range cases {
		set.Fire(context.Background(), Info{Event: c.ev, Lock: "nightly", ExitCode: c.code, Started: started})
	}
	got := rec.seen()
	if len(got) != len(cases) {
		t.Fatalf("%d requests, want %d: %+v", len(got), len(cases), got)
	}
	for i, c := range cases {
		r := got[i]
		if r.method != http.MethodPost || r.path != c.path {
			t.Errorf("%s: %s %s, want POST %s", c.ev, r.method, r.path, c.path)
		}
		if r.body.Event != string(c.ev) || r.body.Lock != "nightly" {
			t.Errorf("%s: body %+v", c.ev, r.body)
		}
		hasCode := c.ev == Success || c.ev == Failure || c.ev == Lost
		if (r.body.ExitCode != nil) != hasCode || (hasCode && *r.body.ExitCode != c.code) {
			t.Errorf("%s: exit_code %v, want %d (set: %v)", c.ev, r.body.ExitCode, c.code, hasCode)
		}
	}
	if w := warned.all(); len(w) > 0 {
		t.Errorf("warnings: %q", w)
	}
}

// Transient answers (5xx, 429, 408) are retried; the hook then succeeds.
func TestTransientAnswersAreRetried(t *testing.T) {
	fastBackoff(t)
	rec := &recorder{statuses: []int{http.StatusServiceUnavailable, http.StatusTooManyRequests, http.StatusBadGateway}}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	var warned lines
	set := &Set{Warn: warned.add}
	set.Add(Success, mustParse(t, srv.URL+"/hook", false))
	set.Fire(context.Background(), Info{Event: Success, Lock: "job"})
	if n := len(rec.seen()); n != 4 {
		t.Errorf("%d requests, want 4 (3 transient failures, then success)", n)
	}
	if w := warned.all(); len(w) > 0 {
		t.Errorf("warnings after a success: %q", w)
	}
}

// A hook that keeps failing is tried MaxTries times and reported once; a
// final answer (404) is not retried.
func TestFailingHookIsReportedOnce(t *testing.T) {
	fastBackoff(t)
	for _, c := range []struct {
		status int
		tries  int
	}{{http.StatusInternalServerError, MaxTries}, {http.StatusNotFound, 1}} {
		statuses := make([]int, 10)
		for i := range statuses {
			statuses[i] = c.status
		}
		rec := &recorder{statuses: statuses}
		srv := httptest.NewServer(rec)
		var warned lines
		set := &Set{Warn: warned.add}
		set.Add(Failure, mustParse(t, srv.URL+"/hook", false))
		set.Fire(context.Background(), Info{Event: Failure, Lock: "job", ExitCode: 1})
		srv.Close()
		if n := len(rec.seen()); n != c.tries {
			t.Errorf("status %d: %d requests, want %d", c.status, n, c.tries)
		}
		w := warned.all()
		if len(w) != 1 || !strings.Contains(w[0], "answered "+strconv.Itoa(c.status)) || strings.Contains(w[0], "\n") {
			t.Errorf("status %d: warnings %q, want one line naming the status", c.status, w)
		}
	}
}

// A hook that hangs is cut at the timeout: Fire returns, and says so.
func TestHungHookIsCutAtTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	var warned lines
	timeout := 200 * time.Millisecond
	set := &Set{Timeout: timeout, Warn: warned.add}
	set.Add(Start, mustParse(t, srv.URL+"/slow", false))
	start := time.Now()
	set.Fire(context.Background(), Info{Event: Start, Lock: "job"})
	// Uncut, the handler would never answer: any bound far below that
	// shows the cut, without timing the machine.
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("Fire took %s with a %s timeout", took, timeout)
	}
	w := warned.all()
	if len(w) != 1 || !strings.Contains(w[0], "timed out after 200ms") {
		t.Errorf("warnings %q, want one saying it timed out", w)
	}
}

// A command hook gets the event in its environment; one that hangs is
// killed at the timeout.
func TestCommandHook(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("sh")
	}
	out := filepath.Join(t.TempDir(), "env")
	var warned lines
	set := &Set{Timeout: 5 * time.Second, Warn: warned.add}
	set.Add(Failure, mustParse(t, `echo "$SCHEDLOCK_EVENT $SCHEDLOCK_LOCK_NAME $SCHEDLOCK_EXIT_CODE" > `+out, false))
	set.Fire(context.Background(), Info{Event: Failure, Lock: "job", ExitCode: 7})
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(b)); got != "failure job 7" {
		t.Errorf("hook saw %q, want %q", got, "failure job 7")
	}
	if w := warned.all(); len(w) > 0 {
		t.Errorf("warnings: %q", w)
	}

	timeout := 200 * time.Millisecond
	hung := &Set{Timeout: timeout, Warn: warned.add}
	hung.Add(Start, mustParse(t, "sleep 60", false))
	start := time.Now()
	hung.Fire(context.Background(), Info{Event: Start, Lock: "job"})
	if took := time.Since(start); took > 30*time.Second { // uncut, sleep 60 would hold it 60s
		t.Errorf("a hung command hook held Fire for %s (timeout %s)", took, timeout)
	}
	if w := warned.all(); len(w) != 1 || !strings.Contains(w[0], "timed out") || !strings.Contains(w[0], "command sleep …") {
		t.Errorf("warnings %q", w)
	}

	failing := &Set{Warn: warned.add}
	failing.Add(Skip, mustParse(t, "exit 4", false))
	failing.Fire(context.Background(), Info{Event: Skip, Lock: "job"})
	if w := warned.all(); len(w) != 2 || !strings.Contains(w[1], "exited with code 4") {
		t.Errorf("warnings %q", w)
	}
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		ping bool
		kind Kind
		err  string
	}{
		{"https://hc-ping.com/uuid", true, KindPing, ""},
		{"http://127.0.0.1:8080/x", false, KindURL, ""},
		{"/opt/notify.sh --to ops", false, KindCommand, ""},
		{"", false, 0, "empty"},
		{"   ", true, 0, "empty"},
		{"/opt/notify.sh", true, 0, "not an http"},
		{"ftp://host/x", false, 0, "not an http"},
		{"https:///nohost", false, 0, "no host"},
	} {
		h, err := Parse(c.in, c.ping)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("Parse(%q, %v) = %v, want an error with %q", c.in, c.ping, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("Parse(%q, %v): %v", c.in, c.ping, err)
		case c.err == "" && h.Kind != c.kind:
			t.Errorf("Parse(%q, %v) kind %v, want %v", c.in, c.ping, h.Kind, c.kind)
		}
	}
}

// Messages never show a ping URL's UUID, a password or a query value; the
// suffix the event added stays readable.
func TestRedactURL(t *testing.T) {
	base, _ := url.Parse("https://bob:s3cret@hc-ping.com/5b4f3c2a-0000-4000-8000-123456789abc?token=abcdef123")
	got := RedactURL(PingURL(base, Failure, 3), base)
	if want := "https://xxxxx@hc-ping.com/xxxxx/3?token=xxxxx"; got != want {
		t.Errorf("RedactURL = %q, want %q", got, want)
	}
	for _, secret := range []string{"s3cret", "5b4f3c2a", "abcdef123", "bob"} {
		if strings.Contains(got, secret) {
			t.Errorf("%q shows %q", got, secret)
		}
	}
	if got := Redact("ftp://u:pw@host/x"); strings.Contains(got, "pw") {
		t.Errorf("Redact shows the password: %q", got)
	}
	if got := Redact("curl -H 'Authorization: Bearer tok'"); got != "curl …" {
		t.Errorf("Redact(command) = %q", got)
	}
}

// The payload's times are RFC 3339 UTC with milliseconds, the layout of
// every time in schedlock's JSON.
func TestPayloadTimesHaveMilliseconds(t *testing.T) {
	if TimeLayout != output.TimeLayout {
		t.Fatalf("TimeLayout %q, output.TimeLayout %q", TimeLayout, output.TimeLayout)
	}
	at := time.Date(2026, 5, 1, 12, 0, 0, 123456789, time.FixedZone("CEST", 2*3600))
	p := payload(Info{Event: Success, Lock: "nightly", Started: at.Add(-1500 * time.Millisecond), Time: at})
	if p.Time != "2026-05-01T10:00:00.123Z" || p.Started != "2026-05-01T09:59:58.623Z" {
		t.Errorf("time %q, started %q: want UTC with three fraction digits", p.Time, p.Started)
	}
	b, err := json.Marshal(p)
	if err != nil || !strings.Contains(string(b), `"time":"2026-05-01T10:00:00.123Z"`) {
		t.Errorf("body %s (%v)", b, err)
	}
}
