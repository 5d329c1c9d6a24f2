package gocronlock_test

import (
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"github.com/schedlock/schedlock/lock"
	"github.com/schedlock/schedlock/lock/internal/locktest"
)

// testTable is the lease table of this package's tests, created once per
// database and kept: parallel tests of other packages use tables of their
// own.
const testTable = "gocronlock_test"

// liveDSNs are the databases and strategies the tests run on
// (locktest.LiveDSNs, by "backend/strategy"): the table strategy on
// testTable everywhere, and the session strategy, Open's default, on
// PostgreSQL and MariaDB/MySQL.
func liveDSNs(t *testing.T) map[string]string { return locktest.LiveDSNs(t, testTable) }

// openT opens dsn for the test, creating the lease table.
func openT(t *testing.T, dsn string) *lock.DB { return locktest.Open(t, dsn) }

// skewedClock is the real clock read skew ahead (or behind): a node whose
// clock is off. Timers and tickers run at real speed, so a scheduler on it
// fires at its own idea of the round times, skew off the others.
type skewedClock struct {
	clockwork.Clock
	skew time.Duration
}

func (c skewedClock) Now() time.Time                  { return c.Clock.Now().Add(c.skew) }
func (c skewedClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }
func (c skewedClock) Until(t time.Time) time.Duration { return t.Sub(c.Now()) }

// tickCounter counts the runs of each tick, and which nodes ran them.
type tickCounter struct {
	mu    sync.Mutex
	runs  map[int][]int // tick → nodes that ran it
	first int
	last  int
	seen  chan struct{} // signalled on every run
}

func newTickCounter() *tickCounter {
	return &tickCounter{runs: map[int][]int{}, first: -1, seen: make(chan struct{}, 1)}
}

func (c *tickCounter) add(tick, node int) {
	c.mu.Lock()
	c.runs[tick] = append(c.runs[tick], node)
	if c.first < 0 || tick < c.first {
		c.first = tick
	}
	c.last = max(c.last, tick)
	c.mu.Unlock()
	select {
	case c.seen <- struct{}{}:
	default:
	}
}

// span is the number of ticks from the first run to the last.
func (c *tickCounter) span() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.first < 0 {
		return -1
	}
	return c.last - c.first
}

// waitSpan waits until runs cover n ticks after the first, or deadline.
func (c *tickCounter) waitSpan(t *testing.T, n int, deadline time.Duration) {
	t.Helper()
	timeout := time.After(deadline)
	for c.span() < n {
		select {
		case <-c.seen:
		case <-timeout:
			t.Fatalf("runs covered %d ticks after %s, want %d: %v", c.span(), deadline, n, c.snapshot())
		}
	}
}

func (c *tickCounter) snapshot() map[int][]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[int][]int, len(c.runs))
	for k, v := range c.runs {
		out[k] = append([]int(nil), v...)
	}
	return out
}

// checkOncePerTick fails unless every tick from the first run to the last
// ran exactly once.
func (c *tickCounter) checkOncePerTick(t *testing.T) {
	t.Helper()
	runs := c.snapshot()
	c.mu.Lock()
	first, last := c.first, c.last
	c.mu.Unlock()
	for tick := first; tick <= last; tick++ {
		if n := len(runs[tick]); n != 1 {
			t.Errorf("tick %d ran %d times (nodes %v), want once; all runs: %v", tick, n, runs[tick], runs)
		}
	}
}

// runAll runs fn as one subtest per case, all at once. The subtests wait
// on timers, not the CPU, so they are not queued behind -parallel (the
// number of CPUs) as t.Parallel subtests would be.
func runAll(t *testing.T, cases map[string]string, fn func(t *testing.T, dsn string)) {
	t.Helper()
	var wg sync.WaitGroup
	for name, dsn := range cases {
		wg.Go(func() { t.Run(name, func(t *testing.T) { fn(t, dsn) }) })
	}
	wg.Wait()
}
