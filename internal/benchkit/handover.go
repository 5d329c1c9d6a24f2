package benchkit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// HandOver is the latency from a holder's release to a waiter's acquire,
// over HandOvers hand-overs, in milliseconds.
type HandOver struct {
	Strategy  string  `json:"strategy"`
	HandOvers int     `json:"hand_overs"`
	MinMS     float64 `json:"min_ms"`
	MedianMS  float64 `json:"median_ms"`
	MeanMS    float64 `json:"mean_ms"`
	P90MS     float64 `json:"p90_ms"`
	P99MS     float64 `json:"p99_ms"`
	MaxMS     float64 `json:"max_ms"`
}

// Pause bounds of a holder before it releases: long enough for the waiter
// to be waiting, and spread over 100 ms so that a waiter polling every
// 100 ms or less shows its average delay rather than one phase of it.
const (
	minHoldPause   = 20 * time.Millisecond
	holdPauseRange = 100 * time.Millisecond
)

// MeasureHandOver runs hand-overs of name between a holder and a waiter,
// each through its own locker as two processes would (so a session lock
// is handed over by the server's own wait, not inside this process): the
// holder takes the lock, the waiter starts
// Acquire with opts.Wait, the holder releases after a pause of 20–120 ms,
// and the latency runs from the holder's call to Release to the return of
// the waiter's Acquire. The budget's cycles count hand-overs; a duration
// budget runs at least one.
func MeasureHandOver(ctx context.Context, holderLocker, waiterLocker dialects.Locker, name string, opts dialects.Options, b Budget) (HandOver, error) {
	res := HandOver{Strategy: string(holderLocker.Strategy())}
	m := b.begin()
	var latencies []time.Duration
	hold, wait := workerOptions(opts, 0), workerOptions(opts, 1)
	hold.Wait = 0
	for len(latencies) == 0 || m.more() {
		d, err := handOverOnce(ctx, holderLocker, waiterLocker, name, hold, wait)
		if err != nil {
			return summarise(res, latencies), fmt.Errorf("hand-over %d: %w", len(latencies)+1, err)
		}
		latencies = append(latencies, d)
		m.add()
	}
	return summarise(res, latencies), nil
}

type acquired struct {
	lease dialects.Lease
	at    time.Time
	err   error
}

func handOverOnce(ctx context.Context, holderLocker, waiterLocker dialects.Locker, name string, hold, wait dialects.Options) (time.Duration, error) {
	holder, err := holderLocker.Acquire(ctx, name, hold)
	if err != nil {
		return 0, fmt.Errorf("holder acquire: %w", err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	got := make(chan acquired, 1)
	go func() {
		l, err := waiterLocker.Acquire(wctx, name, wait)
		got <- acquired{lease: l, at: time.Now(), err: err}
	}()
	pause := minHoldPause + rand.N(holdPauseRange)
	select {
	case <-ctx.Done():
	case <-time.After(pause):
	}
	released := time.Now()
	rerr := holder.Release(context.WithoutCancel(ctx))
	if rerr != nil {
		cancel()
	}
	a := <-got
	if a.err == nil {
		if err := a.lease.Release(context.WithoutCancel(ctx)); err != nil && rerr == nil {
			rerr = fmt.Errorf("waiter release: %w", err)
		}
	}
	switch {
	case rerr != nil:
		return 0, fmt.Errorf("holder release: %w", rerr)
	case a.err != nil:
		return 0, fmt.Errorf("waiter acquire: %w", a.err)
	}
	return a.at.Sub(released), nil
}

// Take is one side of a hand-over outside the engine (a peer's lock, for
// the Go benchmarks that set peers beside the engine): it takes the lock
// — the waiter's blocks until it has it — and returns its release.
type Take func(ctx context.Context) (release func(ctx context.Context) error, err error)

// MeasureHandOverOf is MeasureHandOver for any two Takes, the holder's
// and the waiter's, with the same pauses and the same latency: from the
// holder's call to release to the return of the waiter's take. strategy
// names it in the result.
func MeasureHandOverOf(ctx context.Context, strategy string, holder, waiter Take, b Budget) (HandOver, error) {
	res := HandOver{Strategy: strategy}
	m := b.begin()
	var latencies []time.Duration
	for len(latencies) == 0 || m.more() {
		release, err := holder(ctx)
		if err != nil {
			return summarise(res, latencies), fmt.Errorf("holder take: %w", err)
		}
		type took struct {
			release func(context.Context) error
			at      time.Time
			err     error
		}
		got := make(chan took, 1)
		go func() {
			r, err := waiter(ctx)
			got <- took{r, time.Now(), err}
		}()
		select {
		case <-ctx.Done():
		case <-time.After(minHoldPause + rand.N(holdPauseRange)):
		}
		released := time.Now()
		rerr := release(context.WithoutCancel(ctx))
		a := <-got
		if a.err != nil {
			return summarise(res, latencies), fmt.Errorf("waiter take: %w", a.err)
		}
		if err := a.release(context.WithoutCancel(ctx)); err != nil && rerr == nil {
			rerr = err
		}
		if rerr != nil {
			return summarise(res, latencies), fmt.Errorf("release: %w", rerr)
		}
		latencies = append(latencies, a.at.Sub(released))
		m.add()
	}
	return summarise(res, latencies), nil
}

// summarise fills res with the statistics of latencies.
func summarise(res HandOver, latencies []time.Duration) HandOver {
	res.HandOvers = len(latencies)
	if len(latencies) == 0 {
		return res
	}
	s := append([]time.Duration(nil), latencies...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	ms := func(d time.Duration) float64 { return round(float64(d)/float64(time.Millisecond), 3) }
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	res.MinMS, res.MaxMS = ms(s[0]), ms(s[len(s)-1])
	res.MeanMS = ms(sum / time.Duration(len(s)))
	res.MedianMS = ms(median(s))
	res.P90MS = ms(s[percentileIndex(len(s), 0.90)])
	res.P99MS = ms(s[percentileIndex(len(s), 0.99)])
	return res
}

func median(sorted []time.Duration) time.Duration {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// percentileIndex is the nearest-rank index of percentile p in n sorted
// values.
func percentileIndex(n int, p float64) int {
	i := int(float64(n)*p+0.999999) - 1
	switch {
	case i < 0:
		return 0
	case i >= n:
		return n - 1
	}
	return i
}

// HandOverPeer is one lock measured by HandOverTurns: its holder's and
// its waiter's Take, each on a client of its own.
type HandOverPeer struct {
	Name           string
	Holder, Waiter Take
}

// HandOverTurns measures n hand-overs of each peer, one hand-over of
// each per turn in a random order, so that all see the same load on a
// shared machine, and returns each one's figures, in peers' order.
func HandOverTurns(ctx context.Context, peers []HandOverPeer, n int) ([]HandOver, error) {
	latencies := make([][]time.Duration, len(peers))
	for range n {
		for _, i := range rand.Perm(len(peers)) {
			h, err := MeasureHandOverOf(ctx, peers[i].Name, peers[i].Holder, peers[i].Waiter, Budget{Cycles: 1})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", peers[i].Name, err)
			}
			latencies[i] = append(latencies[i], time.Duration(h.MedianMS*float64(time.Millisecond)))
		}
	}
	out := make([]HandOver, len(peers))
	for i, p := range peers {
		out[i] = summarise(HandOver{Strategy: p.Name}, latencies[i])
	}
	return out, nil
}
