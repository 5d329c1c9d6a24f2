package benchkit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// Plan says what Run measures.
type Plan struct {
	// Strategies to measure; empty means every one the database supports
	// (the others are skipped with a note). A strategy asked for by name
	// that the database lacks is an error matching dialects.ErrUnsupported.
	Strategies []dialects.Strategy
	// Table is the lock table of the table strategy. With no Name, Run
	// creates a table of Table.Preset's layout under a fresh name and drops
	// it at the end; a named table is used as it is, never created or
	// dropped.
	Table dialects.Table

	// Cycles measures uncontended lock cycles per strategy, beside the
	// round trip and, for session locks, the raw statements.
	Cycles bool
	// Workers > 0 measures Workers goroutines contending for one name.
	Workers int
	// Locks > 0 holds Locks distinct session locks at once.
	Locks int
	// HandOver measures the latency from a release to a waiter's acquire.
	HandOver bool
	// Leases > 0 holds Leases table leases (a store's leases) at once
	// through WithLock for LeaseHold (default DefaultLeaseHold), kept
	// alive by their refreshes (HoldLeases).
	Leases    int
	LeaseHold time.Duration

	// Budget bounds each measurement.
	Budget Budget
	// Progress, when set, is called as each measurement starts.
	Progress func(step string)
}

// Report is what Run measured. Its JSON field names are a stable
// interface, documented in docs/bench.md; sections not asked for are null
// (objects) or [] (lists).
type Report struct {
	Target   string `json:"target"`
	Database string `json:"database"`
	Dialect  string `json:"dialect"`
	// DurationSeconds is the duration budget of each measurement, null
	// when CyclesPerMeasurement is set.
	DurationSeconds      *float64 `json:"duration_seconds"`
	CyclesPerMeasurement *int64   `json:"cycles_per_measurement"`

	RoundTrip  *RoundTripResult `json:"round_trip"`
	Cycles     []CycleResult    `json:"cycles"`
	Contention []ContentionRun  `json:"contention"`
	HeldLocks  *Held            `json:"held_locks"`
	Leases     *Leases          `json:"leases"`
	HandOver   []HandOver       `json:"hand_over"`
	// Notes say what was skipped and why.
	Notes []string `json:"notes"`
}

// RoundTripResult is the physical limit: one trivial statement (a store:
// command) at a time on one connection.
type RoundTripResult struct {
	Statement string `json:"statement"`
	Rate
}

// CycleResult is one strategy's uncontended acquire+release cycles.
type CycleResult struct {
	Strategy string `json:"strategy"`
	Engine   Rate   `json:"engine"`
	// Raw is the backend's raw try-lock and unlock on one connection or
	// client, when its bench support offers them: the session statements
	// of a SQL database, a store's raw take and release
	// (benchops.StoreBaseline).
	Raw *Rate `json:"raw"`
	// EngineToRaw is Engine over Raw cycles per second.
	EngineToRaw *float64 `json:"engine_to_raw"`
	// LimitCyclesPerSecond is half the round trips per second: a cycle is
	// two round trips. EngineToLimit is Engine over it.
	LimitCyclesPerSecond float64  `json:"limit_cycles_per_second"`
	EngineToLimit        *float64 `json:"engine_to_limit"`
}

// ContentionRun is one strategy's contended throughput on one name.
type ContentionRun struct {
	Strategy string `json:"strategy"`
	Workers  int    `json:"workers"`
	// Engine: every worker tries without waiting.
	Engine Contended `json:"engine"`
	// Raw: the same loop on the raw statements (a store: commands), one
	// connection or client per worker.
	Raw *Contended `json:"raw"`
	// EngineToRaw is Engine over Raw successes per second.
	EngineToRaw *float64 `json:"engine_to_raw"`
	// EngineWaiting: every worker waits (Options.Wait) instead of retrying.
	EngineWaiting Contended `json:"engine_waiting"`
	// RawWaiting: the raw blocking loop, each worker waiting on the
	// server (benchops.SessionOps.Lock) on a driver connection of its
	// own, where the database has one; EngineWaitingToRawWaiting is
	// EngineWaiting over it, successes per second.
	RawWaiting                *Contended `json:"raw_waiting"`
	EngineWaitingToRawWaiting *float64   `json:"engine_waiting_to_raw_waiting"`
}

// handOverWait is the waiter's Options.Wait: far longer than any sane
// hand-over, so a waiter that is never handed the lock shows as an error.
const handOverWait = time.Minute

// Run measures backend as p asks: any dialects.Backend, through its
// lockers. The raw figures beside the engine's come from the opened
// backend (else, for a SQL database, its registered support): for a SQL
// database (*sqlkit.DB) the round trip of a trivial statement and the raw
// session-lock statements; for a lock store its benchops.StoreBaseline
// commands (a trivial command, a raw take and release).
// It returns what was measured so far with the first error; a report is
// returned whenever the backend could be measured at all.
func Run(ctx context.Context, backend dialects.Backend, p Plan) (*Report, error) {
	t := newTarget(backend)
	r := &Report{Dialect: t.dialect, Cycles: []CycleResult{}, Contention: []ContentionRun{}, HandOver: []HandOver{}, Notes: []string{}}
	if p.Budget.Cycles > 0 {
		c := p.Budget.Cycles
		r.CyclesPerMeasurement = &c
	} else {
		d := p.Budget.Duration
		if d <= 0 {
			d = DefaultDuration
		}
		s := d.Seconds()
		r.DurationSeconds = &s
	}
	lockers, cleanup, err := openLockers(ctx, t, p, r)
	defer cleanup()
	if err != nil {
		return r, err
	}
	m := &measurement{t: t, lockers: lockers, r: r, budget: p.Budget,
		prefix: "schedlock-bench-" + randomHex(),
		opts:   dialects.Options{Owner: dialects.NewOwner(), AtMost: time.Minute},
		step: func(s string) {
			if p.Progress != nil {
				p.Progress(s)
			}
		}}
	if t.store == nil && t.db == nil {
		r.Notes = append(r.Notes, "no raw commands of "+t.dialect+" to compare with: the engine is measured alone")
	}
	// Each measurement asked for, in the order of the report.
	for _, measure := range []struct {
		asked bool
		run   func(ctx context.Context) error
	}{
		{p.Cycles, m.cycles},
		{p.Workers > 0, func(ctx context.Context) error { return m.contention(ctx, p.Workers) }},
		{p.HandOver, m.handOver},
		{p.Locks > 0, func(ctx context.Context) error { return m.held(ctx, p.Locks) }},
		{p.Leases > 0, func(ctx context.Context) error { return m.leases(ctx, p.Leases, p.LeaseHold) }},
	} {
		if !measure.asked {
			continue
		}
		if err := measure.run(ctx); err != nil {
			return r, err
		}
	}
	return r, nil
}

// measurement is one Run: the target, its lockers, where the results go.
type measurement struct {
	t       *target
	lockers []dialects.Locker
	r       *Report
	budget  Budget
	prefix  string // of every lock name the run uses
	opts    dialects.Options
	step    func(string)
}

// contention measures workers workers on one name per locker.
func (m *measurement) contention(ctx context.Context, workers int) error {
	for _, l := range m.lockers {
		c := ContentionRun{Strategy: string(l.Strategy()), Workers: workers}
		err := measureContention(ctx, m.t, l, m.prefix+"-contended-"+string(l.Strategy()), m.opts, m.budget, &c, m.step)
		m.r.Contention = append(m.r.Contention, c)
		if err != nil {
			return err
		}
	}
	return nil
}

// handOver measures the hand-over latency per locker.
func (m *measurement) handOver(ctx context.Context) error {
	wait := m.opts
	wait.Wait = handOverWait
	for _, l := range m.lockers {
		m.step(string(l.Strategy()) + ": hand-over latency")
		waiters, closeWaiters, err := m.t.workerLockers(l, 1)
		if err != nil {
			return err
		}
		h, err := MeasureHandOver(ctx, l, waiters[0], m.prefix+"-handover-"+string(l.Strategy()), wait, m.budget)
		closeWaiters()
		m.r.HandOver = append(m.r.HandOver, h)
		if err != nil {
			return err
		}
	}
	return nil
}

// held holds locks distinct locks at once: session locks on a SQL
// database, the first strategy's leases on a store.
func (m *measurement) held(ctx context.Context, locks int) error {
	l := heldLocker(m.t, m.lockers)
	if l == nil {
		return nil
	}
	m.step(fmt.Sprintf("%s: %d locks held at once", l.Strategy(), locks))
	h, err := HoldMany(ctx, m.t.backend, l, m.prefix+"-held", locks, m.opts)
	m.r.HeldLocks = &h
	return err
}

// leases holds n leases at once through WithLock on the table strategy's
// locker (a store's first).
func (m *measurement) leases(ctx context.Context, n int, hold time.Duration) error {
	l := leaseLocker(m.t, m.lockers)
	if l == nil {
		return nil
	}
	if hold <= 0 {
		hold = DefaultLeaseHold
	}
	most, limit, limited, err := leaseLimit(ctx, l)
	if err != nil {
		return err
	}
	if limited && n > most {
		return &LeaseLimitError{Asked: n, Most: most, Limit: limit}
	}
	m.step(fmt.Sprintf("%s: %d leases held for %s", l.Strategy(), n, hold))
	res, err := HoldLeases(ctx, m.t.backend, l, m.prefix+"-lease", n, m.opts.Owner, hold)
	m.r.Leases = &res
	return err
}

// leaseLocker is the locker whose leases --leases holds: the table
// strategy's, or on a store the first.
func leaseLocker(t *target, lockers []dialects.Locker) dialects.Locker {
	for _, l := range lockers {
		if l.Strategy() == dialects.StrategyTable {
			return l
		}
	}
	if t.db == nil && len(lockers) > 0 {
		return lockers[0]
	}
	return nil
}

// heldLocker is the locker whose locks are held at once: the session
// locker, or on a store (whose leases hold no connection each) the first.
func heldLocker(t *target, lockers []dialects.Locker) dialects.Locker {
	for _, l := range lockers {
		if l.Strategy() == dialects.StrategySession {
			return l
		}
	}
	if t.db == nil && len(lockers) > 0 {
		return lockers[0]
	}
	return nil
}

// cycles measures, in Rounds turns, the round trip and for each locker
// its engine cycles, interleaved cycle by cycle with its raw commands'
// where the backend gives them.
func (m *measurement) cycles(ctx context.Context) error {
	r, t := m.r, m.t
	if t.hasRoundTrip() {
		r.RoundTrip = &RoundTripResult{}
	}
	r.Cycles = make([]CycleResult, len(m.lockers))
	for i, l := range m.lockers {
		r.Cycles[i].Strategy = string(l.Strategy())
		if t.hasRaw(l) {
			r.Cycles[i].Raw = &Rate{}
		}
	}
	defer finishCycles(r)
	var raw rawClient = sqlClient{t}
	if t.db != nil && t.session != nil {
		ops, err := t.sessionOps(ctx)
		if err != nil {
			return err
		}
		defer closeSession(ops)
		raw = sessionClient{ops: ops, statement: t.roundTripStatement()}
	}
	if t.store != nil {
		ops, err := t.storeOps(ctx)
		if err != nil {
			return err
		}
		defer closeOps(ops)
		raw = storeClient{ops: ops, name: t.roundTripName()}
	}
	slices := m.budget.slices()
	for n, slice := range slices {
		turn := fmt.Sprintf("round %d of %d: ", n+1, len(slices))
		if r.RoundTrip != nil {
			m.step(turn + "round trip")
			s, rate, err := raw.roundTrip(ctx, slice)
			r.RoundTrip.Statement = s
			r.RoundTrip.add(rate)
			if err != nil {
				return err
			}
		}
		for i, l := range m.lockers {
			c, name := &r.Cycles[i], m.prefix+"-cycle-"+string(l.Strategy())
			engine := engineCycle(ctx, l, name, m.opts)
			if c.Raw == nil {
				m.step(turn + c.Strategy + " engine lock cycles")
				rate, err := loop(slice, engine)
				c.Engine.add(rate)
				if err != nil {
					return fmt.Errorf("%s lock cycles: %w", c.Strategy, err)
				}
				continue
			}
			m.step(turn + c.Strategy + " raw and engine lock cycles")
			rawCycle, done, err := raw.cycle(ctx, name)
			if err != nil {
				return fmt.Errorf("%s raw lock cycles: %w", c.Strategy, err)
			}
			rawRate, engineRate, err := interleave(slice, rawCycle, engine)
			done(err != nil)
			c.Raw.add(rawRate)
			c.Engine.add(engineRate)
			if err != nil {
				return fmt.Errorf("%s lock cycles: %w", c.Strategy, err)
			}
		}
	}
	return nil
}

// rawClient runs the raw figures of the lock cycles: on a SQL database a
// pinned connection per turn, on a store one client for all turns.
type rawClient interface {
	roundTrip(ctx context.Context, b Budget) (statement string, r Rate, err error)
	// cycle is one raw try-lock and unlock of name; done ends its use
	// (failed: a measurement on it failed).
	cycle(ctx context.Context, name string) (cycle func() error, done func(failed bool), err error)
}

type sqlClient struct{ t *target }

func (c sqlClient) roundTrip(ctx context.Context, b Budget) (string, Rate, error) {
	statement := ""
	if rt, ok := roundTripper(c.t.backend); ok {
		statement = rt.RoundTripSQL()
	}
	conn, err := pin(ctx, c.t.db.SQL)
	if err != nil {
		return statement, Rate{}, err
	}
	s, rate, err := RoundTrip(ctx, conn, statement, b)
	unpin(conn, err != nil)
	return s, rate, err
}

func (c sqlClient) cycle(context.Context, string) (func() error, func(bool), error) {
	return nil, nil, fmt.Errorf("%w: no raw session statements of %s", dialects.ErrUnsupported, c.t.dialect)
}

// sessionClient runs the raw figures of a SQL database on one connection
// of its driver (benchops.SessionBaseline) for all turns.
type sessionClient struct {
	ops       SessionOps
	statement string
}

func (c sessionClient) roundTrip(ctx context.Context, b Budget) (string, Rate, error) {
	rate, err := loop(b, func() error { return c.ops.RoundTrip(ctx) })
	if err != nil {
		err = fmt.Errorf("round trip (%s): %w", c.statement, err)
	}
	return c.statement, rate, err
}

func (c sessionClient) cycle(ctx context.Context, name string) (func() error, func(bool), error) {
	return rawSessionCycle(ctx, c.ops, name), func(bool) {}, nil
}

type storeClient struct {
	ops  StoreOps
	name string
}

func (c storeClient) roundTrip(ctx context.Context, b Budget) (string, Rate, error) {
	rate, err := StoreRoundTrip(ctx, c.ops, b)
	return c.name, rate, err
}

func (c storeClient) cycle(ctx context.Context, name string) (func() error, func(bool), error) {
	return rawStoreCycle(ctx, c.ops, name), func(bool) {}, nil
}

// finishCycles computes the limits and ratios of r's cycles.
func finishCycles(r *Report) {
	for i := range r.Cycles {
		c := &r.Cycles[i]
		if r.RoundTrip != nil {
			c.LimitCyclesPerSecond = round(r.RoundTrip.CyclesPerSecond/2, 1)
		}
		c.EngineToLimit = ratio(c.Engine.CyclesPerSecond, c.LimitCyclesPerSecond)
		if c.Raw != nil {
			c.EngineToRaw = ratio(c.Engine.CyclesPerSecond, c.Raw.CyclesPerSecond)
		}
	}
}

// measureContention measures, in Rounds turns, c.Workers workers on one
// name per round: the raw commands (where the backend gives them), the
// engine trying, the engine waiting.
func measureContention(ctx context.Context, t *target, l dialects.Locker, name string, opts dialects.Options, b Budget, c *ContentionRun, step func(string)) error {
	st, workers := c.Strategy, c.Workers
	if t.hasRaw(l) {
		c.Raw = &Contended{}
	}
	rawWait := t.db != nil && c.Raw != nil && t.session != nil
	if rawWait {
		c.RawWaiting = &Contended{}
	}
	defer func() {
		if c.Raw != nil {
			c.EngineToRaw = ratio(c.Engine.SuccessesPerSecond, c.Raw.SuccessesPerSecond)
		}
		if c.RawWaiting != nil {
			c.EngineWaitingToRawWaiting = ratio(c.EngineWaiting.SuccessesPerSecond, c.RawWaiting.SuccessesPerSecond)
		}
	}()
	lockers, closeLockers, err := t.workerLockers(l, workers)
	if err != nil {
		return fmt.Errorf("%s contention: %w", st, err)
	}
	defer closeLockers()
	slices := b.slices()
	for n, slice := range slices {
		turn := fmt.Sprintf("round %d of %d: %s, %d ", n+1, len(slices), st, workers)
		// A name per round: a waiting acquire cut off at the end of a
		// round may have taken its lock on the server (a table lease then
		// stays until it ends), which must not refuse the next round.
		name := fmt.Sprintf("%s-%d", name, n)
		if c.Raw != nil {
			step(turn + "raw workers on one name")
			var raw Contended
			var err error
			if t.db != nil {
				raw, err = RawContention(ctx, t.sessionOps, name, workers, slice)
			} else {
				raw, err = RawStoreContention(ctx, t.storeOps, name, workers, slice)
			}
			c.Raw.add(raw)
			if err != nil {
				return fmt.Errorf("%s raw contention: %w", st, err)
			}
		}
		step(turn + "engine workers on one name")
		if err := warm(ctx, lockers, name+"-warm", opts); err != nil {
			return fmt.Errorf("%s contention: %w", st, err)
		}
		engine, err := EngineContention(ctx, lockers, name, opts, slice)
		c.Engine.add(engine)
		if err != nil {
			return fmt.Errorf("%s contention: %w", st, err)
		}
		step(turn + "waiting engine workers on one name")
		waiting, err := EngineWaitingContention(ctx, lockers, name, opts, slice)
		c.EngineWaiting.add(waiting)
		if err != nil {
			return fmt.Errorf("%s contention with waiting workers: %w", st, err)
		}
		if rawWait {
			step(turn + "raw waiting workers on one name")
			// A name of its own: a wait cut off at the end of the
			// engine's turn leaves nothing behind, but the raw one must
			// not meet the engine's last holders.
			raw, err := RawWaitingContention(ctx, t.sessionOps, name+"-raw-wait", workers, slice)
			if errors.Is(err, dialects.ErrUnsupported) {
				c.RawWaiting = nil
				rawWait = false
				continue
			}
			c.RawWaiting.add(raw)
			if err != nil {
				return fmt.Errorf("%s raw contention with waiting workers: %w", st, err)
			}
		}
	}
	return nil
}

// warm takes and releases a lock through each locker, so that the
// measurement that follows finds their lock connections open and
// prepared.
func warm(ctx context.Context, lockers []dialects.Locker, name string, opts dialects.Options) error {
	for i, l := range lockers {
		lease, err := l.Acquire(ctx, fmt.Sprintf("%s-%d", name, i), opts)
		if err != nil {
			return fmt.Errorf("warm-up acquire: %w", err)
		}
		if err := lease.Release(ctx); err != nil {
			return fmt.Errorf("warm-up release: %w", err)
		}
	}
	return nil
}

// openLockers returns the lockers of p's strategies, creating the
// temporary lock table when the table strategy needs one; cleanup drops it.
func openLockers(ctx context.Context, t *target, p Plan, r *Report) ([]dialects.Locker, func(), error) {
	cleanup := func() {}
	strategies, explicit := p.Strategies, len(p.Strategies) > 0
	if !explicit {
		strategies = dialects.Strategies
	}
	var lockers []dialects.Locker
	for _, s := range strategies {
		switch s {
		case dialects.StrategySession:
			if t.db != nil && p.Leases > 0 && p.Locks == 0 && !p.Cycles && p.Workers == 0 && !p.HandOver {
				continue // only table leases are held through WithLock on a SQL database
			}
			l, err := t.backend.Locker(dialects.StrategySession, dialects.Table{})
			if err != nil {
				if !explicit && errors.Is(err, dialects.ErrUnsupported) {
					r.Notes = append(r.Notes, "session strategy skipped: "+err.Error())
					continue
				}
				return nil, cleanup, err
			}
			lockers = append(lockers, l)
		case dialects.StrategyTable:
			if t.db != nil && p.Locks > 0 && p.Leases == 0 && !p.Cycles && p.Workers == 0 && !p.HandOver {
				continue // only session locks are held at once on a SQL database
			}
			l, drop, err := tableLocker(ctx, t.backend, p.Table)
			cleanup = drop
			if err != nil {
				if !explicit && errors.Is(err, dialects.ErrUnsupported) {
					r.Notes = append(r.Notes, "table strategy skipped: "+err.Error())
					continue
				}
				return nil, cleanup, err
			}
			lockers = append(lockers, l)
		default:
			return nil, cleanup, fmt.Errorf("%w: unknown strategy %q", dialects.ErrInvalid, s)
		}
	}
	if len(lockers) == 0 {
		what := "no lock strategy to measure"
		if p.Locks > 0 {
			what = "no session locks to hold at once"
		}
		return nil, cleanup, fmt.Errorf("%w: %s has %s", dialects.ErrUnsupported, t.dialect, what)
	}
	return lockers, cleanup, nil
}

// tableLocker returns the table-strategy locker of t; with no name, on a
// new table (on a store: a fresh key prefix) that drop removes where the
// locker can drop.
func tableLocker(ctx context.Context, b dialects.Backend, t dialects.Table) (dialects.Locker, func(), error) {
	drop := func() {}
	temporary := t.Name == ""
	if temporary {
		t.Name = "schedlock_bench_" + randomHex()
	}
	l, err := b.Locker(dialects.StrategyTable, t)
	if err != nil || !temporary {
		return l, drop, err
	}
	tl, ok := l.(dialects.TableCreator)
	if !ok {
		return l, drop, nil
	}
	if err := tl.CreateTable(ctx); err != nil {
		return nil, drop, fmt.Errorf("create the temporary lock table %s: %w", t.Name, err)
	}
	drop = func() {
		d, ok := l.(dialects.TableDropper)
		if !ok {
			return
		}
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = d.DropTable(dctx)
	}
	return l, drop, nil
}

func randomHex() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
