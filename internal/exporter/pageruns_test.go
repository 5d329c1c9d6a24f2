package exporter

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// runSource lists one held lock with a recorded run and reads its recent
// runs, counting the reads.
type runSource struct {
	runs  []dialects.Run
	reads *int
}

func (s runSource) ListLocks(context.Context, dialects.ListOptions) (*dialects.Listing, error) {
	now := time.Now()
	last := s.runs[0]
	return &dialects.Listing{Locks: []dialects.LockEntry{
		{Name: "jobs::nightly", State: dialects.StateHeld, Owner: "vm:1:a", Until: now.Add(time.Hour), DBNow: now,
			Strategy: dialects.StrategyTable, Preset: dialects.PresetSchedlock, Source: "schedlock", LastRun: &last},
		{Name: "never-ran", State: dialects.StateFree, DBNow: now, Strategy: dialects.StrategyTable, Preset: dialects.PresetSchedlock, Source: "schedlock"},
	}}, nil
}

func (s runSource) RecentRuns(_ context.Context, e dialects.LockEntry, n int) ([]dialects.Run, error) {
	*s.reads++
	if e.Name != "nightly" || e.Namespace != "jobs" {
		return nil, nil
	}
	return s.runs[:min(n, len(s.runs))], nil
}

func (runSource) Close() error { return nil }

var runItemRE = regexp.MustCompile(`<li class="(run[^"]*)" data-exit="(\d+)">([^<]*)</li>`)

// The status page shows the newest PageRuns runs of a lock with run
// history, newest first, a failed one and one past 70% of its at-most
// marked, read once per snapshot however many times the page loads; a lock
// without runs shows "-".
func TestStatusPageRecentRuns(t *testing.T) {
	start := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	var runs []dialects.Run
	for i := range 7 {
		r := dialects.Run{Name: "jobs::nightly", Token: int64(10 - i), StartedAt: start.Add(-time.Duration(i) * time.Hour), Duration: 12 * time.Second, AtMost: 30 * time.Minute}
		switch i {
		case 1:
			r.ExitCode = 3
		case 2:
			r.Duration = 25 * time.Minute
		}
		runs = append(runs, r)
	}
	reads := 0
	src := runSource{runs: runs, reads: &reads}
	e, err := New([]Target{{Name: "db", Open: func(context.Context) (Source, error) { return src, nil }}},
		Options{Logger: slog.New(slog.DiscardHandler), Cache: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	page := func() string {
		rec := httptest.NewRecorder()
		e.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		body, _ := io.ReadAll(rec.Body)
		return string(body)
	}
	body := page()
	_ = page()
	items := runItemRE.FindAllStringSubmatch(body, -1)
	if len(items) != PageRuns {
		t.Fatalf("%d runs on the page, want %d:\n%s", len(items), PageRuns, body)
	}
	want := []struct{ class, exit, text string }{
		{"run", "0", "12-01 02:00:00 · 12s · 1% of 30m0s · exit 0"},
		{"run failed", "3", "12-01 01:00:00 · 12s · 1% of 30m0s · exit 3"},
		{"run warn", "0", "12-01 00:00:00 · 25m0s · 83% of 30m0s · exit 0"},
		{"run", "0", "11-30 23:00:00 · 12s · 1% of 30m0s · exit 0"},
		{"run", "0", "11-30 22:00:00 · 12s · 1% of 30m0s · exit 0"},
	}
	for i, w := range want {
		if got := items[i]; got[1] != w.class || got[2] != w.exit || got[3] != w.text {
			t.Errorf("run %d: %q %q %q, want %q %q %q", i, got[1], got[2], got[3], w.class, w.exit, w.text)
		}
	}
	if reads != 1 {
		t.Errorf("two page loads within --cache read the runs %d times, want once (the lock without runs not at all)", reads)
	}
	neverRan := regexp.MustCompile(`(?s)data-lock="never-ran".*?</tr>`).FindString(body)
	if !strings.Contains(neverRan, `<td data-label="Last runs">-</td>`) {
		t.Errorf("the lock without runs: %s", neverRan)
	}
}
