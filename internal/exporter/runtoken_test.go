package exporter

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// listingSource serves one fixed listing.
type listingSource struct{ locks []dialects.LockEntry }

func (s listingSource) ListLocks(context.Context, dialects.ListOptions) (*dialects.Listing, error) {
	return &dialects.Listing{Locks: append([]dialects.LockEntry(nil), s.locks...)}, nil
}

func (listingSource) Close() error { return nil }

// A last run's token is exported as a fencing token only for a lock that
// has fencing tokens: the runs of a ShedLock row are numbered by the run
// table, a number the zombie rule must not compare with anything.
func TestLastRunTokenOnlyWithFencingTokens(t *testing.T) {
	now := time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC)
	run := &dialects.Run{Token: 7, StartedAt: now.Add(-time.Minute), Duration: time.Minute, AtMost: 2 * time.Minute}
	src := listingSource{locks: []dialects.LockEntry{
		{Name: "native", State: dialects.StateHeld, Token: 8, HasToken: true, Until: now.Add(time.Hour), DBNow: now, Strategy: dialects.StrategyTable, Source: "schedlock", Preset: dialects.PresetSchedlock, LastRun: run},
		{Name: "shed", State: dialects.StateHeld, Until: now.Add(time.Hour), DBNow: now, Strategy: dialects.StrategyTable, Source: "shedlock", Preset: dialects.PresetShedlock, LastRun: run},
	}}
	e, err := New([]Target{{Name: "jobs", Open: func(context.Context) (Source, error) { return src, nil }}}, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	mfs := scrape(t, e.Handler())
	if v := mustValue(t, mfs, "schedlock_lock_last_run_fencing_token", map[string]string{"lock": "native"}); v != 7 {
		t.Errorf("native lock's last run token %v, want 7", v)
	}
	if _, ok := value(mfs, "schedlock_lock_last_run_fencing_token", map[string]string{"lock": "shed"}); ok {
		t.Error("a ShedLock lock's run number is exported as a fencing token")
	}
	if v := mustValue(t, mfs, "schedlock_lock_last_run_at_most_share", map[string]string{"lock": "shed"}); v != 0.5 {
		t.Errorf("the ShedLock lock's last run share %v, want 0.5", v)
	}
}
