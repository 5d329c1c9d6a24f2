package benchkit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/claimtable"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// ClaimPlan is what RunClaims measures: Workers goroutines, each claiming
// Batch rows per call, with every claim strategy of Strategies (empty:
// every one the dialect runs), beside the raw SQL of the same claim.
type ClaimPlan struct {
	Strategies []dialects.ClaimStrategy
	Workers    int
	Batch      int
	Budget     Budget
	Progress   func(step string)
}

// claimLease is the claim lease of the measurement: rows come back as
// soon as they are claimed, so a table of a few thousand rows never runs
// dry, for the engine and the raw statement alike.
const claimLease = time.Millisecond

// ClaimsReport is what RunClaims measured. Its JSON field names are a
// stable interface (docs/claims.md).
type ClaimsReport struct {
	Target   string `json:"target"`
	Database string `json:"database"`
	Dialect  string `json:"dialect"`
	Workers  int    `json:"workers"`
	Batch    int    `json:"batch"`
	// Rows is how many rows the task table held.
	Rows            int      `json:"rows"`
	DurationSeconds *float64 `json:"duration_seconds"`
	// Recommended is the claim strategy the probe recommends.
	Recommended string `json:"recommended"`
	// Raw is the hand-written single statement on the same table, null
	// where the database has none (Oracle, Dameng).
	Raw          *ClaimRate            `json:"raw"`
	RawStatement string                `json:"raw_statement"`
	Strategies   []ClaimStrategyResult `json:"strategies"`
	// Anchors are published figures of other claiming systems, for scale;
	// they come from other hardware and other work per job.
	Anchors []Anchor `json:"anchors"`
	Notes   []string `json:"notes"`
}

// ClaimRate is claimed rows per second over one measurement.
type ClaimRate struct {
	Rows          int64   `json:"rows"`
	Claims        int64   `json:"claims"`
	Errors        int64   `json:"errors"`
	Seconds       float64 `json:"seconds"`
	RowsPerSecond float64 `json:"rows_per_second"`
}

func (r *ClaimRate) add(o ClaimRate) {
	r.Rows += o.Rows
	r.Claims += o.Claims
	r.Errors += o.Errors
	r.Seconds = round(r.Seconds+o.Seconds, 6)
	if r.Seconds > 0 {
		r.RowsPerSecond = round(float64(r.Rows)/r.Seconds, 1)
	}
}

// ClaimStrategyResult is one strategy through the engine.
type ClaimStrategyResult struct {
	Strategy string    `json:"strategy"`
	Engine   ClaimRate `json:"engine"`
	// EngineToRaw is Engine.RowsPerSecond over Raw's, null without Raw.
	EngineToRaw *float64 `json:"engine_to_raw"`
	// FirstError is the first claim that failed, when any did.
	FirstError string `json:"first_error,omitempty"`
}

// Anchor is one published throughput figure.
type Anchor struct {
	System string  `json:"system"`
	Figure float64 `json:"per_second"`
	Unit   string  `json:"unit"`
	Setup  string  `json:"setup"`
	Source string  `json:"source"`
}

// ClaimAnchors are the published figures issue 11 names, as their
// projects publish them.
var ClaimAnchors = []Anchor{
	{"River", 46000, "jobs", "river bench, 1M no-op jobs burned down, 2,000 goroutines, 8-core M2 MacBook Air, local PostgreSQL", "riverqueue.com/docs/benchmarks; riverqueue/river#278, PR #258"},
	{"db-scheduler lock-and-fetch", 10600, "executions", "4-core PostgreSQL on GCP, 4 scheduler VMs of 2 cores, 20 threads", "kagkarlsson/db-scheduler docs/performance.md (PR #175)"},
	{"graphile-worker", 183000, "jobs", "concurrentJobs 24, maxPoolSize 25, batched complete, a well-specced database", "worker.graphile.org/docs/performance"},
}

// RunClaims measures claims on backend: it makes a task table of its own
// (dropped at the end), fills it, and runs the raw SQL and
// each strategy in turns (Rounds slices each), Workers goroutines
// claiming Batch rows per call.
func RunClaims(ctx context.Context, backend dialects.Backend, p ClaimPlan) (*ClaimsReport, error) {
	if p.Workers < 1 || p.Batch < 1 || p.Batch > claimtable.MaxBatch {
		return nil, fmt.Errorf("%w: claims bench needs workers >= 1 and a batch of 1 to %d", dialects.ErrInvalid, claimtable.MaxBatch)
	}
	db, ok := sqlkit.Of(backend)
	if !ok || !claimtable.Supported(backend) {
		return nil, fmt.Errorf("%w: %s has no task rows to claim", dialects.ErrUnsupported, backend.Detected().Dialect)
	}
	b, _ := claimtable.BuilderOf(backend)
	rec, _, err := claimtable.Recommend(ctx, backend)
	if err != nil {
		return nil, err
	}
	strategies := p.Strategies
	if len(strategies) == 0 {
		strategies = b.Strategies()
	}
	for _, s := range strategies {
		if !slices.Contains(b.Strategies(), s) {
			return nil, fmt.Errorf("%w: claim strategy %s on %s (it claims with %v)", dialects.ErrUnsupported, s, db.Info.Dialect, b.Strategies())
		}
	}
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	table := claimtable.Table{Name: "sl_bench_" + hex.EncodeToString(suffix[:])}
	rows := min(max(1000, p.Workers*p.Batch*8), 100000)
	r := &ClaimsReport{Dialect: db.Info.Dialect, Workers: p.Workers, Batch: p.Batch, Rows: rows, Recommended: string(rec), Anchors: ClaimAnchors, Notes: []string{}}
	if p.Budget.Cycles == 0 {
		d := p.Budget.Duration
		if d <= 0 {
			d = DefaultDuration
		}
		s := d.Seconds()
		r.DurationSeconds = &s
	}
	setup, err := claimtable.New(db.SQL, b, table, dialects.ClaimOptimistic, claimtable.Options{})
	if err != nil {
		return nil, err
	}
	if err := setup.CreateTable(ctx); err != nil {
		return nil, err
	}
	defer func() {
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = setup.DropTable(cleanup)
	}()
	fill := make([]claimtable.NewTask, rows)
	for i := range fill {
		fill[i] = claimtable.NewTask{Type: "bench", Payload: []byte("payload"), Priority: int64(i % 4)}
	}
	if err := setup.Add(ctx, fill...); err != nil {
		return nil, err
	}
	raw, rawSQL := rawClaim(backend, db, table.Name)
	r.RawStatement = rawSQL
	if raw == nil {
		r.Notes = append(r.Notes, fmt.Sprintf("%s has no single claim statement to compare with (no row limit beside FOR UPDATE): the engine's figures stand alone", db.Info.Dialect))
	} else {
		r.Raw = &ClaimRate{}
	}
	claimers := make([]*claimtable.Claimer, len(strategies))
	for i, s := range strategies {
		if claimers[i], err = claimtable.New(db.SQL, b, table, s, claimtable.Options{Lease: claimLease}); err != nil {
			return nil, err
		}
		r.Strategies = append(r.Strategies, ClaimStrategyResult{Strategy: string(s)})
	}
	for round, slice := range p.Budget.slices() {
		if raw != nil {
			step(p, fmt.Sprintf("raw SQL, round %d of %d", round+1, Rounds))
			rate, _ := measureClaims(ctx, p.Workers, slice, func(ctx context.Context, owner string) (int, error) {
				return raw(ctx, db, owner, p.Batch)
			})
			r.Raw.add(rate)
		}
		for i, cl := range claimers {
			step(p, fmt.Sprintf("%s claims, round %d of %d", strategies[i], round+1, Rounds))
			rate, first := measureClaims(ctx, p.Workers, slice, func(ctx context.Context, owner string) (int, error) {
				tasks, err := cl.Claim(ctx, claimtable.Request{Owner: owner, Max: p.Batch})
				return len(tasks), err
			})
			r.Strategies[i].Engine.add(rate)
			if first != nil && r.Strategies[i].FirstError == "" {
				r.Strategies[i].FirstError = first.Error()
			}
		}
		if err := ctx.Err(); err != nil {
			return r, err
		}
	}
	for i := range r.Strategies {
		if r.Raw != nil && r.Raw.RowsPerSecond > 0 {
			x := round(r.Strategies[i].Engine.RowsPerSecond/r.Raw.RowsPerSecond, 3)
			r.Strategies[i].EngineToRaw = &x
		}
	}
	return r, nil
}

func step(p ClaimPlan, s string) {
	if p.Progress != nil {
		p.Progress(s)
	}
}

// measureClaims runs workers goroutines calling claim until the budget is
// spent, counting rows and claims; a failed claim is counted and the
// worker goes on.
func measureClaims(ctx context.Context, workers int, b Budget, claim func(ctx context.Context, owner string) (int, error)) (ClaimRate, error) {
	m := b.begin()
	ctx, cancel := context.WithTimeout(ctx, m.remaining()+30*time.Second)
	defer cancel()
	var mu sync.Mutex
	var rate ClaimRate
	var first error
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := fmt.Sprintf("bench-%d", w)
			var rows, claims, errs int64
			for m.more() && ctx.Err() == nil {
				n, err := claim(ctx, owner)
				claims++
				if err != nil {
					errs++
					mu.Lock()
					if first == nil && !errors.Is(err, context.Canceled) {
						first = err
					}
					mu.Unlock()
					continue
				}
				rows += int64(n)
				if m.add() {
					break
				}
			}
			mu.Lock()
			rate.Rows += rows
			rate.Claims += claims
			rate.Errors += errs
			mu.Unlock()
		}()
	}
	wg.Wait()
	rate.Seconds = round(time.Since(m.start).Seconds(), 6)
	if rate.Seconds > 0 {
		rate.RowsPerSecond = round(float64(rate.Rows)/rate.Seconds, 1)
	}
	return rate, first
}
