package exporter

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/schedlock/schedlock/dialects"
)

// Namespace is the prefix of every metric.
const Namespace = "schedlock"

// ExportedStates are the states of schedlock_lock_state, one series each
// per lock: 1 for the lock's state, 0 for the others. A lock's waiters
// are schedlock_lock_waiters.
var ExportedStates = []dialects.LockState{dialects.StateHeld, dialects.StatePaused, dialects.StateExpired, dialects.StateStale, dialects.StateFree}

// descs are the metrics' descriptions, built for the exporter's extra
// labels.
type descs struct {
	up, readDuration, reads, readErrors, errorReason, locks, folded *prometheus.Desc

	state, waiters, leaseRemaining, heldSeconds, token, holder, lastRefresh, refreshEvery *prometheus.Desc

	runStart, runDuration, runExit, runAtMost, runShare, runToken *prometheus.Desc

	sinceSuccess, expectedInterval *prometheus.Desc
}

func newDescs(extra []string) descs {
	target := append([]string{"dsn"}, extra...)
	lock := append(append([]string(nil), target...), "lock", "namespace", "source")
	d := func(name, help string, labels []string, more ...string) *prometheus.Desc {
		return prometheus.NewDesc(Namespace+"_"+name, help, append(append([]string(nil), labels...), more...), nil)
	}
	return descs{
		up:           d("up", "1 when the last read of the database succeeded, 0 when it failed.", target),
		readDuration: d("scrape_duration_seconds", "How long the last read of the database took.", target),
		reads:        d("scrapes_total", "Reads of the database since the exporter started (scrapes within --cache share one).", target),
		readErrors:   d("scrape_errors_total", "Failed reads of the database since the exporter started.", target),
		errorReason:  d("scrape_error", "1 while the database's last read failed, labelled with why: connect, privilege, no_table, timeout or error.", target, "reason"),
		locks:        d("locks", "Locks listed, by state.", target, "state"),
		folded:       d("holders_folded", "Holders past --max-holders, folded into one schedlock_lock_holder series.", target),

		state:          d("lock_state", "1 for the lock's state, 0 for the others: held, paused, expired, stale, free.", lock, "state"),
		waiters:        d("lock_waiters", "Sessions queued for the session lock.", lock),
		leaseRemaining: d("lock_lease_remaining_seconds", "Seconds until the lease ends, on the database clock; negative once it ended.", lock),
		heldSeconds:    d("lock_held_seconds", "Seconds since the lock was taken, while held, paused or stale.", lock),
		token:          d("lock_fencing_token", "The lease's fencing token.", lock),
		lastRefresh:    d("lock_last_refresh_timestamp_seconds", "When the holder last refreshed the lease (Unix time, database clock), where its owner declares a heartbeat.", lock),
		refreshEvery:   d("lock_refresh_interval_seconds", "How often the holder promised to refresh the lease; stale once it is two intervals late.", lock),
		holder:         d("lock_holder", "The holder of a held, paused, stale or expired lock (1); the series with owner \"_folded\" counts the holders past --max-holders.", lock, "owner", "host", "application"),

		runStart:         d("lock_last_run_start_timestamp_seconds", "When the newest recorded run started (Unix time, database clock).", lock),
		runDuration:      d("lock_last_run_duration_seconds", "How long the newest recorded run took.", lock),
		runExit:          d("lock_last_run_exit_code", "The exit code of the newest recorded run.", lock),
		runAtMost:        d("lock_last_run_at_most_seconds", "The at-most the newest recorded run held its lock with.", lock),
		runShare:         d("lock_last_run_at_most_share", "The share of its at-most the newest recorded run used (0.5: half).", lock),
		sinceSuccess:     d("lock_seconds_since_last_success", "Seconds since the newest recorded run that exited 0 started (database clock), for jobs whose schedule is recorded with their runs (run --schedule).", lock),
		expectedInterval: d("lock_expected_interval_seconds", "How often the job's recorded schedule expects a run; locks ls calls a run missed once the last success is about two intervals old (the schedule's second time after it started).", lock),
		runToken:         d("lock_last_run_fencing_token", "The fencing token of the newest recorded run, for locks with fencing tokens: below schedlock_lock_fencing_token, the lease taken since has not recorded its run (it runs, or its holder died).", lock),
	}
}

// collector is the exporter's prometheus.Collector: it reads the cached
// snapshot and emits constant metrics.
type collector struct {
	e *Exporter
	d descs
}

// Collector returns the exporter's prometheus.Collector.
func (e *Exporter) Collector() prometheus.Collector {
	return &collector{e: e, d: newDescs(e.labelNames)}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.d.up, c.d.readDuration, c.d.reads, c.d.readErrors, c.d.errorReason, c.d.locks, c.d.folded,
		c.d.state, c.d.waiters, c.d.leaseRemaining, c.d.heldSeconds, c.d.token, c.d.holder, c.d.lastRefresh, c.d.refreshEvery,
		c.d.runStart, c.d.runDuration, c.d.runExit, c.d.runAtMost, c.d.runShare, c.d.runToken,
		c.d.sinceSuccess, c.d.expectedInterval} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	snap := c.e.Snapshot(context.Background())
	for _, t := range snap.Targets {
		c.collectTarget(ch, t)
	}
}

func (c *collector) collectTarget(ch chan<- prometheus.Metric, t TargetSnapshot) {
	tl := append([]string{t.Name}, t.Labels...)
	gauge := func(d *prometheus.Desc, v float64, labels []string, more ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, append(append([]string(nil), labels...), more...)...)
	}
	up := 0.0
	if t.Up {
		up = 1
	}
	gauge(c.d.up, up, tl)
	gauge(c.d.readDuration, t.Duration.Seconds(), tl)
	ch <- prometheus.MustNewConstMetric(c.d.reads, prometheus.CounterValue, float64(t.Reads), tl...)
	ch <- prometheus.MustNewConstMetric(c.d.readErrors, prometheus.CounterValue, float64(t.Errors), tl...)
	if !t.Up {
		gauge(c.d.errorReason, 1, tl, t.Reason)
		return
	}
	locks := groupLocks(t.Locks)
	counts := map[dialects.LockState]int{}
	for _, l := range locks {
		counts[l.State]++
	}
	for _, s := range append(ExportedStates, dialects.StateWaiting) {
		n := counts[s]
		if s == dialects.StateWaiting {
			n = 0
			for _, l := range locks {
				n += l.Waiters
			}
		}
		gauge(c.d.locks, float64(n), tl, string(s))
	}
	holders := 0
	folded := 0
	for _, l := range locks {
		ll := append(append([]string(nil), tl...), l.Name, l.Namespace, l.Source)
		if l.State != "" {
			for _, s := range ExportedStates {
				v := 0.0
				if s == l.State {
					v = 1
				}
				gauge(c.d.state, v, ll, string(s))
			}
		}
		if l.Waiters > 0 || l.Strategy == dialects.StrategySession {
			gauge(c.d.waiters, float64(l.Waiters), ll)
		}
		c.collectLease(gauge, l.LockEntry, ll)
		if owner, host, app, ok := holderLabels(l.LockEntry); ok {
			if holders < c.e.opts.MaxHolders {
				holders++
				gauge(c.d.holder, 1, ll, owner, host, app)
			} else {
				folded++
			}
		}
		if r := l.LastRun; r != nil {
			if !r.StartedAt.IsZero() {
				gauge(c.d.runStart, float64(r.StartedAt.UnixMilli())/1000, ll)
			}
			gauge(c.d.runDuration, r.Duration.Seconds(), ll)
			gauge(c.d.runExit, float64(r.ExitCode), ll)
			if l.HasToken { // a run of a lock without fencing tokens is numbered by its run table
				gauge(c.d.runToken, float64(r.Token), ll)
			}
			if r.AtMost > 0 {
				gauge(c.d.runAtMost, r.AtMost.Seconds(), ll)
				gauge(c.d.runShare, r.Share(), ll)
			}
		}
		if l.ScheduleInterval > 0 {
			gauge(c.d.expectedInterval, l.ScheduleInterval.Seconds(), ll)
			if s := l.LastSuccess; s != nil && !s.StartedAt.IsZero() && !l.DBNow.IsZero() {
				gauge(c.d.sinceSuccess, l.DBNow.Sub(s.StartedAt).Seconds(), ll)
			}
		}
	}
	if folded > 0 {
		gauge(c.d.holder, float64(folded), tl, "", "", "", FoldedHolder, FoldedHolder, FoldedHolder)
	}
	gauge(c.d.folded, float64(folded), tl)
}

// FoldedHolder is the owner, host and application of the holder series
// that counts the holders past Options.MaxHolders.
const FoldedHolder = "_folded"

// collectLease emits the lease metrics of a lock that has them.
func (c *collector) collectLease(gauge func(*prometheus.Desc, float64, []string, ...string), e dialects.LockEntry, ll []string) {
	if !e.DBNow.IsZero() && !e.Until.IsZero() && !e.Until.Equal(dialects.HeldForGood) {
		gauge(c.d.leaseRemaining, e.Until.Sub(e.DBNow).Seconds(), ll)
	}
	switch e.State {
	case dialects.StateHeld, dialects.StatePaused, dialects.StateStale:
		if age := e.Age(); age > 0 || !e.LockedAt.IsZero() {
			gauge(c.d.heldSeconds, age.Seconds(), ll)
		}
	}
	if e.HasToken {
		gauge(c.d.token, float64(e.Token), ll)
	}
	if !e.LastRefresh.IsZero() {
		gauge(c.d.lastRefresh, float64(e.LastRefresh.UnixMilli())/1000, ll)
	}
	if e.RefreshEvery > 0 {
		gauge(c.d.refreshEvery, e.RefreshEvery.Seconds(), ll)
	}
}

// lockGroup is one exported lock: the entry that holds it (or its only
// entry) and how many sessions wait for it.
type lockGroup struct {
	dialects.LockEntry
	Waiters int
}

// groupLocks merges the entries of one lock (name, namespace and source):
// the sessions waiting for a session lock become its Waiters, the entry
// that holds it its state. A lock only waited for (its holder invisible to
// this user) has no State.
func groupLocks(entries []dialects.LockEntry) []lockGroup {
	type key struct{ name, ns, source string }
	index := map[key]int{}
	var out []lockGroup
	for _, e := range entries {
		if e.Name == "" {
			e.Name = e.Key
		}
		k := key{e.Name, e.Namespace, e.Source}
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			g := lockGroup{LockEntry: e}
			if e.State == dialects.StateWaiting {
				g.State = ""
			}
			out = append(out, g)
		}
		g := &out[i]
		switch {
		case e.State == dialects.StateWaiting:
			g.Waiters++
		case g.State == "":
			waiters := g.Waiters
			g.LockEntry, g.Waiters = e, waiters
		}
	}
	return out
}
