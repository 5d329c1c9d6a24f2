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
		step("round trip")
		rt, err := measureRoundTrip(ctx, db, support, p.Budget)
		if err != nil {
			return r, err
		}
		r.RoundTrip = rt
		for _, l := range lockers {
			c, err := measureCycles(ctx, db, l, ops, prefix+"-cycle-"+string(l.Strategy()), opts, p.Budget, rt, step)
			r.Cycles = append(r.Cycles, c)
			if err != nil {
				return r, err
			}
		}
	}
	if p.Workers > 0 {
		for _, l := range lockers {
			c, err := measureContention(ctx, db, l, ops, prefix+"-contended-"+string(l.Strategy()), opts, p.Workers, p.Budget, step)
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
			h, err := MeasureHandOver(ctx, l, prefix+"-handover-"+string(l.Strategy()), wait, p.Budget)
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

func measureRoundTrip(ctx context.Context, db *dialects.DB, support any, b Budget) (*RoundTripResult, error) {
	statement := ""
	if rt, ok := support.(RoundTripper); ok {
		statement = rt.RoundTripSQL()
	}
	conn, err := pin(ctx, db.SQL)
	if err != nil {
		return nil, err
	}
	s, rate, err := RoundTrip(ctx, conn, statement, b)
	unpin(conn, err != nil)
	return &RoundTripResult{Statement: s, Rate: rate}, err
}

func measureCycles(ctx context.Context, db *dialects.DB, l dialects.Locker, ops dialects.SessionOps, name string, opts dialects.Options, b Budget, rt *RoundTripResult, step func(string)) (CycleResult, error) {
	st := string(l.Strategy())
	c := CycleResult{Strategy: st, LimitCyclesPerSecond: round(rt.CyclesPerSecond/2, 1)}
	if l.Strategy() == dialects.StrategySession && ops != nil {
		step(st + ": raw lock cycles")
		conn, err := pin(ctx, db.SQL)
		if err != nil {
			return c, err
		}
		rate, err := RawSessionCycles(ctx, conn, ops, name, b)
		unpin(conn, err != nil)
		c.Raw = &rate
		if err != nil {
			return c, err
		}
	}
	step(st + ": engine lock cycles")
	rate, err := EngineCycles(ctx, l, name, opts, b)
	c.Engine = rate
	c.EngineToLimit = ratio(rate.CyclesPerSecond, c.LimitCyclesPerSecond)
	if c.Raw != nil {
		c.EngineToRaw = ratio(rate.CyclesPerSecond, c.Raw.CyclesPerSecond)
	}
	if err != nil {
		return c, fmt.Errorf("%s lock cycles: %w", st, err)
	}
	return c, nil
}

func measureContention(ctx context.Context, db *dialects.DB, l dialects.Locker, ops dialects.SessionOps, name string, opts dialects.Options, workers int, b Budget, step func(string)) (ContentionRun, error) {
	st := string(l.Strategy())
	c := ContentionRun{Strategy: st, Workers: workers}
	if l.Strategy() == dialects.StrategySession && ops != nil {
		step(fmt.Sprintf("%s: %d raw workers on one name", st, workers))
		raw, err := RawContention(ctx, db.SQL, ops, name, workers, b)
		c.Raw = &raw
		if err != nil {
			return c, fmt.Errorf("%s raw contention: %w", st, err)
		}
	}
	step(fmt.Sprintf("%s: %d engine workers on one name", st, workers))
	engine, err := EngineContention(ctx, l, name, opts, workers, b)
	c.Engine = engine
	if c.Raw != nil {
		c.EngineToRaw = ratio(engine.SuccessesPerSecond, c.Raw.SuccessesPerSecond)
	}
	if err != nil {
		return c, fmt.Errorf("%s contention: %w", st, err)
	}
	step(fmt.Sprintf("%s: %d waiting engine workers on one name", st, workers))
	waiting, err := EngineWaitingContention(ctx, l, name, opts, workers, b)
	c.EngineWaiting = waiting
	if err != nil {
		return c, fmt.Errorf("%s contention with waiting workers: %w", st, err)
	}
	return c, nil
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
