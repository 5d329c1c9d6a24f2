// Package benchkit is the measuring kernel of `schedlock bench` and of the
// Go benchmarks beside it: lock cycles per second per strategy next to the
// physical limit of one round trip on one connection, contended throughput
// on one name, many session locks held at once, and the hand-over latency
// from a release to a waiting acquire.
//
// The engine is measured only through the public dialects.Locker, Lease and
// Options, so the figures stay comparable whatever the engine does inside.
// What the engine competes with — the raw session-lock statements, the
// trivial round trip, a server-side count of lock-holding sessions — comes
// from the backend's own package: optional interfaces of the opened
// backend — the contract of package dialects/benchops (StoreBaseline,
// RoundTripper, HoldingCounter, ClaimWork) and SessionBaseline — or,
// for a SQL database not yet giving them itself, of the support it gives
// Register; a backend with neither is measured without them.
//
// Every measurement runs under a Budget: a fixed number of cycles, or a
// duration (DefaultDuration). Nothing here prints; progress is reported to
// Plan.Progress and the results come back as a Report whose JSON field
// names are documented in docs/bench.md.
package benchkit

import (
	"sync/atomic"
	"time"
)

// DefaultDuration is how long one measurement runs when its Budget names
// neither a duration nor a number of cycles.
const DefaultDuration = 3 * time.Second

// Budget bounds one measurement: Cycles completed cycles when Cycles > 0,
// else Duration of wall-clock time (DefaultDuration when zero).
type Budget struct {
	Duration time.Duration
	Cycles   int64
}

// meter counts the cycles of one measurement against its budget. It is
// safe for concurrent use by the workers of one measurement.
type meter struct {
	start    time.Time
	deadline time.Time // zero when counting cycles
	limit    int64     // 0 when timing
	done     atomic.Int64
}

func (b Budget) begin() *meter {
	m := &meter{start: time.Now(), limit: b.Cycles}
	if b.Cycles <= 0 {
		d := b.Duration
		if d <= 0 {
			d = DefaultDuration
		}
		m.deadline = m.start.Add(d)
	}
	return m
}

// more reports whether the budget allows another cycle.
func (m *meter) more() bool {
	if m.limit > 0 {
		return m.done.Load() < m.limit
	}
	return time.Now().Before(m.deadline)
}

// add counts one completed cycle and reports whether it was the last the
// budget allows.
func (m *meter) add() (last bool) {
	n := m.done.Add(1)
	return m.limit > 0 && n == m.limit
}

// remaining is the time left until the deadline; for a cycle budget, a
// generous bound that only stops a measurement that hangs.
func (m *meter) remaining() time.Duration {
	if m.limit > 0 {
		return time.Hour
	}
	return time.Until(m.deadline)
}

// Rate is one measured loop: how many cycles completed in how long.
type Rate struct {
	Cycles          int64   `json:"cycles"`
	Seconds         float64 `json:"seconds"`
	CyclesPerSecond float64 `json:"cycles_per_second"`
	// elapsed is Seconds unrounded: a sum of rates (Rate.add) divides by
	// it, so turns shorter than Seconds' microsecond still count.
	elapsed time.Duration
}

func newRate(cycles int64, elapsed time.Duration) Rate {
	if cycles > 0 && elapsed <= 0 {
		// Done within one tick of the clock (an in-memory fake): faster
		// than it can tell, not a rate of nothing.
		elapsed = time.Nanosecond
	}
	r := Rate{Cycles: cycles, Seconds: round(elapsed.Seconds(), 6), elapsed: elapsed}
	if elapsed > 0 {
		r.CyclesPerSecond = round(float64(cycles)/elapsed.Seconds(), 1)
	}
	return r
}

// ratio is a/b rounded to three decimals, or nil when b is zero.
func ratio(a, b float64) *float64 {
	if b == 0 {
		return nil
	}
	r := round(a/b, 3)
	return &r
}

// round rounds x to digits decimals.
func round(x float64, digits int) float64 {
	p := 1.0
	for i := 0; i < digits; i++ {
		p *= 10
	}
	if x < 0 {
		return -float64(int64(-x*p+0.5)) / p
	}
	return float64(int64(x*p+0.5)) / p
}
