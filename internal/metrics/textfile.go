// Package metrics keeps a file in the text format of node_exporter's
// textfile collector (the Prometheus text exposition format) with the
// state of each lock's runs on this host: when the last run started and
// ended, how long it took, its exit code, when a run last succeeded, and
// counters of runs, failures, skips and lost locks.
//
// Update reads the file, changes the lines of one lock name and writes it
// anew: to a temporary file in the same directory, then renamed over the
// old one, so the collector never reads half a file. Counters carry over
// from the file. Several jobs may share one file: on Unix an exclusive
// flock(2) on the lock file beside it (LockPath) is held from the read to
// the rename, so that concurrent updates of different lock names merge
// instead of losing each other's lines (elsewhere give each job a file of
// its own).
//
// The file is the only thing Update replaces, and only when it is
// schedlock's: PATH must be absent or a regular file (not a symbolic
// link, device, FIFO, socket or directory), and its content schedlock's
// metrics (see parse). Anything else is refused before anything is
// written, and Check tells so beforehand. Every wait is bounded by the
// caller's context: the lock is polled, not waited for, and files are
// opened without blocking.
package metrics

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Metric names, all labelled lock="NAME".
const (
	LastStart    = "schedlock_run_last_start_timestamp_seconds"
	LastEnd      = "schedlock_run_last_end_timestamp_seconds"
	LastDuration = "schedlock_run_last_duration_seconds"
	LastExitCode = "schedlock_run_last_exit_code"
	LastSuccess  = "schedlock_run_last_success_timestamp_seconds"
	Runs         = "schedlock_runs_total"
	Failed       = "schedlock_run_failed_total"
	Skipped      = "schedlock_run_skipped_total"
	Lost         = "schedlock_run_lost_total"
	MaxRuntime   = "schedlock_run_max_runtime_exceeded_total"
)

// family is one metric's HELP and TYPE.
type family struct {
	name, kind, help string
}

// families are written in this order.
var families = []family{
	{LastStart, "gauge", "When the last run of the lock's command started on this host (unix seconds); the time it gave up when the command did not start."},
	{LastEnd, "gauge", "When the last run on this host ended (unix seconds)."},
	{LastDuration, "gauge", "How long the last run on this host took, in seconds."},
	{LastExitCode, "gauge", "Exit code of the last run on this host (113: the lock was lost; 124: stopped by --max-runtime)."},
	{LastSuccess, "gauge", "When a run last ended with exit code 0 on this host (unix seconds)."},
	{Runs, "counter", "Runs on this host that were not skipped."},
	{Failed, "counter", "Runs on this host that ended with a non-zero exit code."},
	{Skipped, "counter", "Runs on this host skipped because the lock was held elsewhere."},
	{Lost, "counter", "Runs on this host whose lock was lost while the command ran."},
	{MaxRuntime, "counter", "Runs on this host stopped because the command ran past --max-runtime."},
}

// Run is the outcome of one run of `schedlock run`.
type Run struct {
	// Lock is the lock name (the label).
	Lock string
	// Skipped: the lock was held elsewhere; only the skip counter moves.
	Skipped bool
	// Lost: the lock was lost while the command ran.
	Lost bool
	// MaxRuntime: the command was stopped at --max-runtime.
	MaxRuntime bool
	// Started is when the command started; zero when it did not (then
	// Ended stands for the start too).
	Started time.Time
	Ended   time.Time
	// ExitCode is the run's exit code.
	ExitCode int
}

// state is the values of the file: metric name → lock → value.
type state map[string]map[string]float64

func (s state) set(metric, lock string, v float64) {
	if s[metric] == nil {
		s[metric] = map[string]float64{}
	}
	s[metric][lock] = v
}

func (s state) add(metric, lock string, v float64) { s.set(metric, lock, s[metric][lock]+v) }

// apply records r.
func (s state) apply(r Run) {
	// Counters exist from a lock's first run on, skipped or not, so that
	// rate() and absent() see them start at 0.
	for _, c := range []string{Runs, Failed, Skipped, Lost, MaxRuntime} {
		s.add(c, r.Lock, 0)
	}
	if r.Skipped {
		s.add(Skipped, r.Lock, 1)
		return
	}
	start := r.Started
	if start.IsZero() {
		start = r.Ended
	}
	s.set(LastStart, r.Lock, unixSeconds(start))
	s.set(LastEnd, r.Lock, unixSeconds(r.Ended))
	s.set(LastDuration, r.Lock, r.Ended.Sub(start).Seconds())
	s.set(LastExitCode, r.Lock, float64(r.ExitCode))
	s.add(Runs, r.Lock, 1)
	if r.ExitCode == 0 {
		s.set(LastSuccess, r.Lock, unixSeconds(r.Ended))
	} else {
		s.add(Failed, r.Lock, 1)
	}
	if r.Lost {
		s.add(Lost, r.Lock, 1)
	}
	if r.MaxRuntime {
		s.add(MaxRuntime, r.Lock, 1)
	}
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }

// format is s in the text exposition format: each family's HELP and TYPE,
// then its samples by lock name.
// Not expfmt.MetricFamilyToText: it writes a timestamp as 1.796146647818e+09,
// where this file (and docs/run.md) shows 1796146647.818.
func (s state) format() string {
	var b strings.Builder
	for _, f := range families {
		values := s[f.name]
		if len(values) == 0 {
			continue
		}
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", f.name, f.help, f.name, f.kind)
		locks := make([]string, 0, len(values))
		for l := range values {
			locks = append(locks, l)
		}
		slices.Sort(locks)
		for _, l := range locks {
			fmt.Fprintf(&b, "%s{lock=\"%s\"} %s\n", f.name, escapeLabel(l), strconv.FormatFloat(values[l], 'f', -1, 64))
		}
	}
	return b.String()
}

// escapeLabel escapes a label value as the text format asks: \\, \" and
// \n.
func escapeLabel(v string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v)
}

// unescapeLabel reads an escaped label value up to its closing quote and
// returns it with what follows the quote.
func unescapeLabel(s string) (value, rest string, ok bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), s[i+1:], true
		case '\\':
			if i+1 == len(s) {
				return "", "", false
			}
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case '\\', '"':
				b.WriteByte(s[i])
			default:
				return "", "", false
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", false
}
