package benchkit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
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
	HandOver   []HandOver       `json:"hand_over"`
	// Notes say what was skipped and why.
	Notes []string `json:"notes"`
}

// RoundTripResult is the physical limit: one trivial statement at a time
// on one connection.
type RoundTripResult struct {
	Statement string `json:"statement"`
	Rate
}

// CycleResult is one strategy's uncontended acquire+release cycles.
type CycleResult struct {
	Strategy string `json:"strategy"`
	Engine   Rate   `json:"engine"`
	// Raw is the backend's raw try-lock and unlock statements on one
	// connection (session strategy, when the backend offers them).
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
	// Raw: the same loop on the raw statements, one connection per worker.
	Raw *Contended `json:"raw"`
	// EngineToRaw is Engine over Raw successes per second.
	EngineToRaw *float64 `json:"engine_to_raw"`
	// EngineWaiting: every worker waits (Options.Wait) instead of retrying.
	EngineWaiting Contended `json:"engine_waiting"`
}

// handOverWait is the waiter's Options.Wait: far longer than any sane
// hand-over, so a waiter that is never handed the lock shows as an error.
const handOverWait = time.Minute

// Run measures db as p asks. It returns what was measured so far with the
// first error; a report is returned whenever db could be measured at all.
func Run(ctx context.Context, db *dialects.DB, p Plan) (*Report, error) {
	r := &Report{Dialect: db.Dialect.Name, Cycles: []CycleResult{}, Contention: []ContentionRun{}, HandOver: []HandOver{}, Notes: []string{}}
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
	lockers, cleanup, err := openLockers(ctx, db, p, r)
	defer cleanup()
	if err != nil {
		return r, err
	}
	prefix := "schedlock-bench-" + randomHex()
	opts := dialects.Options{Owner: dialects.NewOwner(), AtMost: time.Minute}
	support := supportFor(db.Dialect.Name)
	raw, _ := support.(RawSessions)
	var ops dialects.SessionOps
	if raw != nil {
		ops = raw.RawSessionOps(db.SQL, db.Info)
	}
	step := func(s string) {
		if p.Progress != nil {
			p.Progress(s)
		}
	}

	if p.Cycles {
		if err := measureCycles(ctx, db, lockers, ops, support, prefix, opts, p.Budget, r, step); err != nil {
			return r, err
		}
	}
	if p.Workers > 0 {
		for _, l := range lockers {
			c := ContentionRun{Strategy: string(l.Strategy()), Workers: p.Workers}
			err := measureContention(ctx, db, l, ops, prefix+"-contended-"+string(l.Strategy()), opts, p.Budget, &c, step)
			r.Contention = append(r.Contention, c)
			if err != nil {
				return r, err
			}
		}
	}
	if p.HandOver {
		wait := opts
		wait.Wait = handOverWait
		for _, l := range lockers {
			step(string(l.Strategy()) + ": hand-over latency")
			waiters, closeWaiters, err := workerLockers(db, l, 1)
			if err != nil {
				return r, err
			}
			h, err := MeasureHandOver(ctx, l, waiters[0], prefix+"-handover-"+string(l.Strategy()), wait, p.Budget)
			closeWaiters()
			r.HandOver = append(r.HandOver, h)
			if err != nil {
				return r, err
			}
		}
	}
	if p.Locks > 0 {
		for _, l := range lockers {
			if l.Strategy() != dialects.StrategySession {
				continue
			}
			step(fmt.Sprintf("session: %d locks held at once", p.Locks))
			h, err := HoldMany(ctx, db, l, prefix+"-held", p.Locks, opts)
			r.HeldLocks = &h
			if err != nil {
				return r, err
			}
		}
	}
	return r, nil
}

// measureCycles measures, in Rounds turns, the round trip and for each
// locker its raw statements (session locks) and its engine cycles, into r.
func measureCycles(ctx context.Context, db *dialects.DB, lockers []dialects.Locker, ops dialects.SessionOps, support any, prefix string, opts dialects.Options, b Budget, r *Report, step func(string)) error {
	statement := ""
	if rt, ok := support.(RoundTripper); ok {
		statement = rt.RoundTripSQL()
	}
	r.RoundTrip = &RoundTripResult{}
	r.Cycles = make([]CycleResult, len(lockers))
	for i, l := range lockers {
		r.Cycles[i].Strategy = string(l.Strategy())
		if l.Strategy() == dialects.StrategySession && ops != nil {
			r.Cycles[i].Raw = &Rate{}
		}
	}
	defer finishCycles(r)
	slices := b.slices()
	for n, slice := range slices {
		turn := fmt.Sprintf("round %d of %d: ", n+1, len(slices))
		step(turn + "round trip")
		conn, err := pin(ctx, db.SQL)
		if err != nil {
			return err
		}
		s, rate, err := RoundTrip(ctx, conn, statement, slice)
		unpin(conn, err != nil)
		r.RoundTrip.Statement = s
		r.RoundTrip.add(rate)
		if err != nil {
			return err
		}
		for i, l := range lockers {
			c, name := &r.Cycles[i], prefix+"-cycle-"+string(l.Strategy())
			if c.Raw != nil {
				step(turn + c.Strategy + " raw lock cycles")
				conn, err := pin(ctx, db.SQL)
				if err != nil {
					return err
				}
				rate, err := RawSessionCycles(ctx, conn, ops, name, slice)
				unpin(conn, err != nil)
				c.Raw.add(rate)
				if err != nil {
					return fmt.Errorf("%s raw lock cycles: %w", c.Strategy, err)
				}
			}
			step(turn + c.Strategy + " engine lock cycles")
			rate, err := EngineCycles(ctx, l, name, opts, slice)
			c.Engine.add(rate)
			if err != nil {
				return fmt.Errorf("%s lock cycles: %w", c.Strategy, err)
			}
		}
	}
	return nil
}

// finishCycles computes the limits and ratios of r's cycles.
func finishCycles(r *Report) {
	for i := range r.Cycles {
		c := &r.Cycles[i]
		c.LimitCyclesPerSecond = round(r.RoundTrip.CyclesPerSecond/2, 1)
		c.EngineToLimit = ratio(c.Engine.CyclesPerSecond, c.LimitCyclesPerSecond)
		if c.Raw != nil {
			c.EngineToRaw = ratio(c.Engine.CyclesPerSecond, c.Raw.CyclesPerSecond)
		}
	}
}

// measureContention measures, in Rounds turns, c.Workers workers on one
// name per round: the raw statements (session locks), the engine trying,
// the engine waiting.
func measureContention(ctx context.Context, db *dialects.DB, l dialects.Locker, ops dialects.SessionOps, name string, opts dialects.Options, b Budget, c *ContentionRun, step func(string)) error {
	st, workers := c.Strategy, c.Workers
	if l.Strategy() == dialects.StrategySession && ops != nil {
		c.Raw = &Contended{}
	}
	defer func() {
		if c.Raw != nil {
			c.EngineToRaw = ratio(c.Engine.SuccessesPerSecond, c.Raw.SuccessesPerSecond)
		}
	}()
	lockers, closeLockers, err := workerLockers(db, l, workers)
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
			raw, err := RawContention(ctx, db.SQL, ops, name, workers, slice)
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
	}
	return nil
}

// workerLockers returns one locker per worker: for session locks a
// locker of its own each (as separate processes would have), closed by
// closeAll; a table locker, holding no state between statements, is
// shared.
func workerLockers(db *dialects.DB, l dialects.Locker, workers int) (lockers []dialects.Locker, closeAll func(), err error) {
	closeAll = func() {
		for _, w := range lockers {
			if c, ok := w.(io.Closer); ok && w != l {
				_ = c.Close()
			}
		}
	}
	for range workers {
		w := l
		if l.Strategy() == dialects.StrategySession {
			if w, err = db.SessionLocker(); err != nil {
				closeAll()
				return nil, func() {}, err
			}
		}
		lockers = append(lockers, w)
	}
	return lockers, closeAll, nil
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
func openLockers(ctx context.Context, db *dialects.DB, p Plan, r *Report) ([]dialects.Locker, func(), error) {
	cleanup := func() {}
	strategies, explicit := p.Strategies, len(p.Strategies) > 0
	if !explicit {
		strategies = dialects.Strategies
	}
	var lockers []dialects.Locker
	for _, s := range strategies {
		switch s {
		case dialects.StrategySession:
			l, err := db.SessionLocker()
			if err != nil {
				if !explicit && errors.Is(err, dialects.ErrUnsupported) {
					r.Notes = append(r.Notes, "session strategy skipped: "+err.Error())
					continue
				}
				return nil, cleanup, err
			}
			lockers = append(lockers, l)
		case dialects.StrategyTable:
			if p.Locks > 0 && !p.Cycles && p.Workers == 0 && !p.HandOver {
				continue // only session locks are held at once
			}
			l, drop, err := tableLocker(ctx, db, p.Table)
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
		return nil, cleanup, fmt.Errorf("%w: %s has %s", dialects.ErrUnsupported, db.Dialect.Name, what)
	}
	return lockers, cleanup, nil
}

// tableLocker returns the table locker of t; with no name, on a new table
// that drop removes.
func tableLocker(ctx context.Context, db *dialects.DB, t dialects.Table) (dialects.TableLocker, func(), error) {
	drop := func() {}
	temporary := t.Name == ""
	if temporary {
		t.Name = "schedlock_bench_" + randomHex()
	}
	l, err := db.TableLocker(t)
	if err != nil || !temporary {
		return l, drop, err
	}
	if err := l.CreateTable(ctx); err != nil {
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
