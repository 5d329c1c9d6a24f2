package exporter

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// listedSource is a Source whose listing is given: what a backend's
// ListLocks returned (SetRuns, which fills the schedule fields, has live
// tests of its own).
type listedSource struct{ listing dialects.Listing }

func (s listedSource) ListLocks(context.Context, dialects.ListOptions) (*dialects.Listing, error) {
	l := s.listing
	return &l, nil
}

func (listedSource) Close() error { return nil }

// TestMissedRunSeries: a job whose schedule is recorded with its runs
// exports the seconds since its last success beside its expected
// interval, on the database clock; a job without a schedule exports
// neither.
func TestMissedRunSeries(t *testing.T) {
	now := time.Date(2026, 12, 6, 2, 0, 0, 0, time.UTC)
	success := &dialects.Run{Name: "every-5m", StartedAt: now.Add(-16 * time.Minute), ExitCode: 0}
	src := listedSource{dialects.Listing{Locks: []dialects.LockEntry{
		{Name: "every-5m", Source: "schedlock", State: dialects.StateFree, DBNow: now,
			Schedule: "*/5 * * * *", ScheduleInterval: 5 * time.Minute, LastSuccess: success, LastRun: success, Missed: true},
		{Name: "unscheduled", Source: "schedlock", State: dialects.StateFree, DBNow: now, LastRun: success},
	}}}
	e, err := New([]Target{{Name: "jobs", Open: func(context.Context) (Source, error) { return src, nil }}},
		Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	mfs := scrape(t, e.Handler())
	lock := func(name string) map[string]string {
		return map[string]string{"dsn": "jobs", "lock": name, "source": "schedlock"}
	}
	if v := mustValue(t, mfs, "schedlock_lock_seconds_since_last_success", lock("every-5m")); v != 16*60 {
		t.Errorf("seconds since last success = %v, want 960", v)
	}
	if v := mustValue(t, mfs, "schedlock_lock_expected_interval_seconds", lock("every-5m")); v != 300 {
		t.Errorf("expected interval = %v, want 300", v)
	}
	for _, name := range []string{"schedlock_lock_seconds_since_last_success", "schedlock_lock_expected_interval_seconds"} {
		if _, ok := value(mfs, name, lock("unscheduled")); ok {
			t.Errorf("%s exported for a job without a schedule", name)
		}
	}
}
