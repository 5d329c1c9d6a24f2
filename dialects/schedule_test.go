package dialects

import (
	"errors"
	"testing"
	"time"
)

func TestParseSchedule(t *testing.T) {
	for _, spec := range []string{"*/5 * * * *", "0 2 * * *", "@every 5m", "@hourly", "@daily", "CRON_TZ=Europe/Berlin 0 2 * * 1-5", "  @every 90s "} {
		if _, err := ParseSchedule(spec); err != nil {
			t.Errorf("%q: %v", spec, err)
		}
	}
	for _, spec := range []string{"", "*/5 * * *", "* * * * * *", "every 5m", "@every 500ms", "@every -5m", "@every", "61 * * * *", "@fortnightly", "CRON_TZ=Nowhere/Else * * * * *"} {
		if _, err := ParseSchedule(spec); !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: %v, want ErrInvalid", spec, err)
		}
	}
}

func TestScheduleTimes(t *testing.T) {
	at := time.Date(2024, 5, 3, 10, 2, 0, 0, time.UTC) // a Friday
	cases := []struct {
		spec     string
		interval time.Duration
		due      time.Time // SuccessDue after a run started at at
	}{
		{"CRON_TZ=UTC */5 * * * *", 5 * time.Minute, time.Date(2024, 5, 3, 10, 10, 0, 0, time.UTC)},
		{"@every 5m", 5 * time.Minute, at.Add(10 * time.Minute)},
		{"CRON_TZ=UTC 0 9 * * 1-5", 24 * time.Hour, time.Date(2024, 5, 7, 9, 0, 0, 0, time.UTC)}, // Mon, then Tue
	}
	for _, tc := range cases {
		s, err := ParseSchedule(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Interval(at); got != tc.interval {
			t.Errorf("%s: interval %s, want %s", tc.spec, got, tc.interval)
		}
		if got := s.SuccessDue(at); !got.Equal(tc.due) {
			t.Errorf("%s: due %s, want %s", tc.spec, got, tc.due)
		}
	}
}

func TestSetRuns(t *testing.T) {
	now := time.Date(2024, 5, 3, 10, 12, 0, 0, time.UTC)
	sched := "CRON_TZ=UTC */5 * * * *"
	ok := &Run{Token: 1, StartedAt: time.Date(2024, 5, 3, 10, 0, 0, 0, time.UTC), Schedule: sched}
	failed := &Run{Token: 3, StartedAt: time.Date(2024, 5, 3, 10, 10, 0, 0, time.UTC), ExitCode: 1, Schedule: sched}
	cases := []struct {
		name          string
		last, success *Run
		now           time.Time
		missed        bool
		due           time.Time
	}{
		{"on time", ok, ok, time.Date(2024, 5, 3, 10, 9, 59, 0, time.UTC), false, time.Date(2024, 5, 3, 10, 10, 0, 0, time.UTC)},
		{"due passed", failed, ok, now, true, time.Date(2024, 5, 3, 10, 10, 0, 0, time.UTC)},
		{"exactly due", failed, ok, time.Date(2024, 5, 3, 10, 10, 0, 0, time.UTC), false, time.Date(2024, 5, 3, 10, 10, 0, 0, time.UTC)},
		{"no success: from the newest run", failed, nil, now, false, time.Date(2024, 5, 3, 10, 20, 0, 0, time.UTC)},
		{"no success, long ago", failed, nil, now.Add(time.Hour), true, time.Date(2024, 5, 3, 10, 20, 0, 0, time.UTC)},
	}
	for _, tc := range cases {
		e := LockEntry{DBNow: tc.now}
		e.SetRuns(tc.last, tc.success)
		if e.Missed != tc.missed || !e.SuccessDue.Equal(tc.due) || e.Schedule != sched || e.ScheduleInterval != 5*time.Minute || e.LastRun != tc.last || e.LastSuccess != tc.success {
			t.Errorf("%s: missed %v due %s interval %s, want %v %s", tc.name, e.Missed, e.SuccessDue, e.ScheduleInterval, tc.missed, tc.due)
		}
	}
	var e LockEntry
	e.SetRuns(&Run{Token: 1}, nil)
	if e.Schedule != "" || e.Missed || !e.SuccessDue.IsZero() || e.LastRun == nil {
		t.Errorf("no schedule: %+v", e)
	}
}

// Over a weekend a weekday schedule expects three days between runs.
func TestScheduleIntervalOverWeekend(t *testing.T) {
	s, err := ParseSchedule("CRON_TZ=UTC 0 9 * * 1-5")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Interval(time.Date(2024, 5, 2, 10, 0, 0, 0, time.UTC)); got != 72*time.Hour { // Thursday: Fri, then Mon
		t.Errorf("interval %s, want 72h", got)
	}
}
