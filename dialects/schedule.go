package dialects

import (
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Schedule is a job's schedule, recorded with its runs (run --schedule) so
// that listings tell a job whose runs stopped succeeding: a cron line of
// five fields ("*/5 * * * *"), a descriptor ("@hourly", "@daily") or
// "@every 5m", read by robfig/cron/v3's standard parser — the parser of
// the robfig/cron schedulers that lock/cronlock serves. Times are the
// host's local time zone unless the spec starts with CRON_TZ=ZONE (or
// TZ=ZONE), as cron's own.
type Schedule struct {
	Spec  string
	sched cron.Schedule
}

// ParseSchedule reads spec; a spec that does not parse gives ErrInvalid
// with the parser's reason.
func ParseSchedule(spec string) (Schedule, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return Schedule{}, invalidf("schedule is empty: give a cron line such as '*/5 * * * *', or @every 5m")
	}
	if rest, ok := strings.CutPrefix(spec, "@every "); ok {
		// robfig/cron takes any interval under 1s as 1s, a negative one too.
		if d, err := time.ParseDuration(strings.TrimSpace(rest)); err == nil && d < time.Second {
			return Schedule{}, invalidf("schedule %q: @every needs an interval of 1s or more", spec)
		}
	}
	s, err := cron.ParseStandard(spec)
	if err != nil {
		return Schedule{}, invalidf("schedule %q does not parse: %v; give a cron line such as '*/5 * * * *', a descriptor such as @hourly, or @every 5m", spec, err)
	}
	if s.Next(time.Now()).IsZero() {
		return Schedule{}, invalidf("schedule %q never fires", spec)
	}
	return Schedule{Spec: spec, sched: s}, nil
}

// Next is the schedule's first time after t; zero when there is none.
func (s Schedule) Next(t time.Time) time.Time {
	if s.sched == nil {
		return time.Time{}
	}
	return s.sched.Next(t)
}

// Interval is the time between the schedule's first two times after t:
// how often a run is expected then (a cron line's gaps may vary: "0 9 * *
// 1-5" is 24h on weekdays, 72h over a weekend).
func (s Schedule) Interval(t time.Time) time.Duration {
	first := s.Next(t)
	second := s.Next(first)
	if first.IsZero() || second.IsZero() {
		return 0
	}
	return second.Sub(first)
}

// SuccessDue is when, after a successful run that started at last, the
// next success is due: the schedule's second time after last. The run of
// its first time has until the one after it to succeed (it may have
// waited for its lock, been spread by --jitter, and must run).
func (s Schedule) SuccessDue(last time.Time) time.Time {
	return s.Next(s.Next(last))
}

// SetRuns records on e its newest run (last) and its newest successful run
// (success), either nil when none is recorded, and judges the schedule the
// newest run was given: Schedule, ScheduleInterval around DBNow,
// SuccessDue (after LastSuccess's start; without one, after the newest
// run's) and Missed when that has passed on the database clock. A
// schedule that no longer parses is kept but not judged.
func (e *LockEntry) SetRuns(last, success *Run) {
	e.LastRun, e.LastSuccess = last, success
	e.Schedule, e.ScheduleInterval, e.SuccessDue, e.Missed = "", 0, time.Time{}, false
	if last == nil || last.Schedule == "" {
		return
	}
	e.Schedule = last.Schedule
	s, err := ParseSchedule(last.Schedule)
	if err != nil {
		return
	}
	now := e.DBNow
	if now.IsZero() {
		now = time.Now()
	}
	e.ScheduleInterval = s.Interval(now)
	from := last.StartedAt
	if success != nil {
		from = success.StartedAt
	}
	e.SuccessDue = s.SuccessDue(from)
	e.Missed = !e.SuccessDue.IsZero() && now.After(e.SuccessDue)
}
