package exporter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/memory"
)

// memoryStore opens a memory store of the test's own with a schedlock
// lock table, and returns a function that takes a lock in it.
func memoryStore(t *testing.T) (string, func(name string, atMost time.Duration) dialects.Lease) {
	t.Helper()
	store := "exporter-" + strings.ReplaceAll(t.Name(), "/", "-") + "-" + dialects.NewOwner()
	b, err := memory.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	l, err := b.LeaseLocker(dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.(interface{ CreateTable(context.Context) error }).CreateTable(context.Background()); err != nil {
		t.Fatal(err)
	}
	return store, func(name string, atMost time.Duration) dialects.Lease {
		t.Helper()
		lease, err := l.Acquire(context.Background(), name, dialects.Options{AtMost: atMost, Owner: "node" + name + ":42:abc"})
		if err != nil {
			t.Fatal(err)
		}
		return lease
	}
}

// memoryTarget is a target on a memory store; down, while set, makes
// opening it fail as a database that went away does.
func memoryTarget(name, store string, down *bool, mu *sync.Mutex) Target {
	return Target{Name: name, Open: func(context.Context) (Source, error) {
		if mu != nil {
			mu.Lock()
			defer mu.Unlock()
			if *down {
				return nil, errors.New("connection refused")
			}
		}
		b, err := memory.Open(store)
		if err != nil {
			return nil, err
		}
		return b, nil
	}}
}

// scrape gets /metrics from h and parses it.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("/metrics: %d %s", rec.Code, rec.Body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return mfs
}

// value is the value of the series of family name whose labels include
// want; ok is false when there is none.
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

func mustValue(t *testing.T, mfs map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	v, ok := value(mfs, name, want)
	if !ok {
		t.Fatalf("no series %s%v", name, want)
	}
	return v
}

func TestMetricsOfHeldAndExpiredLocks(t *testing.T) {
	store, take := memoryStore(t)
	held := take("nightly", time.Hour)
	_ = held
	short := take("hourly", 50*time.Millisecond)
	_ = short
	time.Sleep(120 * time.Millisecond) // hourly's lease runs out; it keeps its owner: expired
	e, err := New([]Target{memoryTarget("jobs", store, nil, nil)}, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	mfs := scrape(t, e.Handler())
	lock := func(name string, more ...string) map[string]string {
		m := map[string]string{"dsn": "jobs", "lock": name, "source": "schedlock"}
		for i := 0; i+1 < len(more); i += 2 {
			m[more[i]] = more[i+1]
		}
		return m
	}
	if v := mustValue(t, mfs, "schedlock_up", map[string]string{"dsn": "jobs"}); v != 1 {
		t.Errorf("up = %v", v)
	}
	for _, s := range ExportedStates {
		want := 0.0
		if s == dialects.StateHeld {
			want = 1
		}
		if v := mustValue(t, mfs, "schedlock_lock_state", lock("nightly", "state", string(s))); v != want {
			t.Errorf("nightly state %s = %v, want %v", s, v, want)
		}
	}
	if v := mustValue(t, mfs, "schedlock_lock_state", lock("hourly", "state", "expired")); v != 1 {
		t.Errorf("hourly expired = %v", v)
	}
	if v := mustValue(t, mfs, "schedlock_lock_lease_remaining_seconds", lock("nightly")); v < 3000 || v > 3600 {
		t.Errorf("nightly lease remaining %v, want about an hour", v)
	}
	if v := mustValue(t, mfs, "schedlock_lock_lease_remaining_seconds", lock("hourly")); v >= 0 {
		t.Errorf("hourly lease remaining %v, want negative", v)
	}
	if _, ok := value(mfs, "schedlock_lock_held_seconds", lock("hourly")); ok {
		t.Error("an expired lock has held seconds")
	}
	if v := mustValue(t, mfs, "schedlock_lock_held_seconds", lock("nightly")); v < 0 || v > 60 {
		t.Errorf("nightly held %v s", v)
	}
	tok, _ := held.Token()
	if v := mustValue(t, mfs, "schedlock_lock_fencing_token", lock("nightly")); v != float64(tok) {
		t.Errorf("token %v, want %d", v, tok)
	}
	if v := mustValue(t, mfs, "schedlock_lock_holder", lock("nightly", "owner", "nodenightly:42:abc", "host", "nodenightly", "application", "")); v != 1 {
		t.Errorf("holder = %v", v)
	}
	if v := mustValue(t, mfs, "schedlock_locks", map[string]string{"dsn": "jobs", "state": "held"}); v != 1 {
		t.Errorf("held locks = %v", v)
	}
}

// Scrapes within Options.Cache share one read; the next one after it
// reads again.
func TestCacheSharesOneRead(t *testing.T) {
	store, take := memoryStore(t)
	take("a", time.Hour)
	e, err := New([]Target{memoryTarget("jobs", store, nil, nil)}, Options{Cache: 400 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	h := e.Handler()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() { defer wg.Done(); scrape(t, h) }()
	}
	wg.Wait()
	mfs := scrape(t, h)
	if v := mustValue(t, mfs, "schedlock_scrapes_total", map[string]string{"dsn": "jobs"}); v != 1 {
		t.Errorf("9 scrapes within --cache read the database %v times, want 1", v)
	}
	time.Sleep(500 * time.Millisecond)
	take("b", time.Hour)
	mfs = scrape(t, h)
	if v := mustValue(t, mfs, "schedlock_scrapes_total", map[string]string{"dsn": "jobs"}); v != 2 {
		t.Errorf("a scrape after --cache: %v reads, want 2", v)
	}
	if _, ok := value(mfs, "schedlock_lock_state", map[string]string{"lock": "b", "state": "held"}); !ok {
		t.Error("the lock taken after the first read is not exported after --cache")
	}
}

// A database that fails is up 0 with one log line per failed read, the
// others are exported, and it comes back by itself.
func TestFailingTargetComesBack(t *testing.T) {
	store, take := memoryStore(t)
	take("a", time.Hour)
	var mu sync.Mutex
	down := true
	var logs bytes.Buffer
	var logMu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		logMu.Lock()
		defer logMu.Unlock()
		return logs.Write(p)
	}), nil))
	e, err := New([]Target{memoryTarget("flaky", store, &down, &mu), memoryTarget("steady", store, nil, nil)},
		Options{Cache: time.Millisecond, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	h := e.Handler()
	for range 2 {
		time.Sleep(2 * time.Millisecond)
		mfs := scrape(t, h)
		if v := mustValue(t, mfs, "schedlock_up", map[string]string{"dsn": "flaky"}); v != 0 {
			t.Errorf("flaky up = %v while down", v)
		}
		if v := mustValue(t, mfs, "schedlock_scrape_error", map[string]string{"dsn": "flaky", "reason": "connect"}); v != 1 {
			t.Errorf("scrape_error = %v", v)
		}
		if v := mustValue(t, mfs, "schedlock_up", map[string]string{"dsn": "steady"}); v != 1 {
			t.Errorf("steady up = %v", v)
		}
		if _, ok := value(mfs, "schedlock_lock_state", map[string]string{"dsn": "steady", "lock": "a", "state": "held"}); !ok {
			t.Error("the steady database's lock is not exported while the other is down")
		}
	}
	logMu.Lock()
	if n := strings.Count(logs.String(), "scrape failed"); n != 2 {
		t.Errorf("%d log lines for 2 failed reads:\n%s", n, logs.String())
	}
	logMu.Unlock()
	mu.Lock()
	down = false
	mu.Unlock()
	time.Sleep(2 * time.Millisecond)
	mfs := scrape(t, h)
	if v := mustValue(t, mfs, "schedlock_up", map[string]string{"dsn": "flaky"}); v != 1 {
		t.Errorf("flaky up = %v once back", v)
	}
	if v := mustValue(t, mfs, "schedlock_scrape_errors_total", map[string]string{"dsn": "flaky"}); v != 2 {
		t.Errorf("errors_total = %v, want 2", v)
	}
	if _, ok := value(mfs, "schedlock_scrape_error", map[string]string{"dsn": "flaky"}); ok {
		t.Error("scrape_error still exported once back")
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// Past MaxHolders the holders are folded into one series that counts
// them.
func TestHolderCapFolds(t *testing.T) {
	store, take := memoryStore(t)
	for i := range 5 {
		take(fmt.Sprintf("job-%d", i), time.Hour)
	}
	e, err := New([]Target{memoryTarget("jobs", store, nil, nil)}, Options{MaxHolders: 2, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	mfs := scrape(t, e.Handler())
	series := len(mfs["schedlock_lock_holder"].GetMetric())
	if series != 3 {
		t.Errorf("%d holder series, want 2 and the folded one", series)
	}
	for _, name := range []string{"job-0", "job-1"} {
		if _, ok := value(mfs, "schedlock_lock_holder", map[string]string{"lock": name, "owner": "node" + name + ":42:abc"}); !ok {
			t.Errorf("no holder series for %s", name)
		}
	}
	if v := mustValue(t, mfs, "schedlock_lock_holder", map[string]string{"lock": "", "owner": FoldedHolder}); v != 3 {
		t.Errorf("folded holder series = %v, want 3", v)
	}
	if v := mustValue(t, mfs, "schedlock_holders_folded", map[string]string{"dsn": "jobs"}); v != 3 {
		t.Errorf("holders_folded = %v, want 3", v)
	}
	// Every lock still has its state.
	if n := mustValue(t, mfs, "schedlock_locks", map[string]string{"state": "held"}); n != 5 {
		t.Errorf("held = %v", n)
	}
}

func TestExtraLabelsOnEverySeries(t *testing.T) {
	store, take := memoryStore(t)
	take("a", time.Hour)
	a := memoryTarget("one", store, nil, nil)
	a.Labels = map[string]string{"env": "prod"}
	b := memoryTarget("two", store, nil, nil)
	b.Labels = map[string]string{"team": "billing"}
	e, err := New([]Target{a, b}, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	mfs := scrape(t, e.Handler())
	if _, ok := value(mfs, "schedlock_lock_state", map[string]string{"dsn": "one", "env": "prod", "team": "", "lock": "a", "state": "held"}); !ok {
		t.Error("no series with env=prod, team=\"\"")
	}
	if _, ok := value(mfs, "schedlock_up", map[string]string{"dsn": "two", "env": "", "team": "billing"}); !ok {
		t.Error("no up series with team=billing")
	}
}

func TestCheckTargetsRefuses(t *testing.T) {
	open := func(context.Context) (Source, error) { return nil, nil }
	cases := map[string][]Target{
		"no database":  nil,
		"two targets":  {{Name: "a", Open: open}, {Name: "a", Open: open}},
		"not a label":  {{Name: "a", Open: open, Labels: map[string]string{"1x": "v"}}},
		"set by the e": {{Name: "a", Open: open, Labels: map[string]string{"lock": "v"}}},
	}
	for want, targets := range cases {
		err := CheckTargets(targets)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckTargets(%v) = %v, want %q", targets, err, want)
		}
	}
}

// The status page lists every lock with its state, holder and lease end,
// reloads itself, escapes what the database says and offers no action.
func TestStatusPage(t *testing.T) {
	store, take := memoryStore(t)
	take("nightly", time.Hour)
	take(`<script>alert(1)</script>`, time.Hour)
	e, err := New([]Target{memoryTarget("jobs", store, nil, nil), {Name: "gone", Open: func(context.Context) (Source, error) {
		return nil, errors.New("connection refused")
	}}}, Options{Cache: 30 * time.Second, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	e.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	body, _ := io.ReadAll(rec.Body)
	page := string(body)
	for _, want := range []string{
		`<meta http-equiv="refresh" content="30">`,
		`<meta name="viewport"`,
		`data-lock="nightly" data-state="held"`,
		`nodenightly:42:abc`,
		`&lt;script&gt;alert(1)&lt;/script&gt;`,
		`data-dsn="gone" data-up="false"`,
		`connect: connection refused`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("status page lacks %q", want)
		}
	}
	for _, never := range []string{"<script>", "<form", "<button", "method=\"post\""} {
		if strings.Contains(strings.ToLower(page), never) {
			t.Errorf("status page has %q", never)
		}
	}
	for _, method := range []string{"POST", "DELETE", "PUT"} {
		rec := httptest.NewRecorder()
		e.Handler().ServeHTTP(rec, httptest.NewRequest(method, "/", nil))
		if rec.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s / = %d, want 405", method, rec.Code)
		}
	}
	rec = httptest.NewRecorder()
	e.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	if rec.Code != 200 || rec.Body.String() != "ok\n" {
		t.Errorf("/healthz = %d %q", rec.Code, rec.Body)
	}
}
