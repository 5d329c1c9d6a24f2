package benchkit

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/benchops"
	"github.com/schedlock/schedlock/dialects/claimtable"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// ClaimPlan is what RunClaims measures: Workers goroutines, each claiming
// Batch rows per call, with every claim strategy of Strategies (empty:
// every one the dialect runs), beside the raw SQL of the same work. The
// work is a claim and a completion of every row claimed, per row and in
// one batch statement; with NoComplete, the claim alone.
type ClaimPlan struct {
	Strategies []dialects.ClaimStrategy
	Workers    int
	Batch      int
	NoComplete bool
	Budget     Budget
	Progress   func(step string)
	// Peer, when set, runs another claiming system on the same database
	// for one slice and returns its rate (PeerRate); it runs in the same
	// rounds as the rest.
	Peer func(ctx context.Context, workers, batch int, slice Budget) (PeerRate, error)
	// PeerName names the peer in the report.
	PeerName string
}

// The work a claims measurement does per claimed row.
const (
	// WorkClaim is the claim alone: rows come back after a 1 ms lease.
	WorkClaim = "claim"
	// WorkComplete is a claim, then a completion of each row.
	WorkComplete = "claim+complete"
	// WorkCompleteBatch is a claim, then one completion of the whole batch.
	WorkCompleteBatch = "claim+complete-batch"
)

// claimOnlyLease is the claim lease of the claim-alone measurement: rows
// come back as soon as they are claimed, so a table of a few thousand rows
// never runs dry, for the engine and the raw statement alike.
const claimOnlyLease = time.Millisecond

// completeLease is the claim lease when rows are completed: long enough
// that no row is claimed again before its worker completes it.
const completeLease = time.Minute

// ClaimsReport is what RunClaims measured. Its JSON field names are a
// stable interface (docs/claims.md).
type ClaimsReport struct {
	Target   string `json:"target"`
	Database string `json:"database"`
	Dialect  string `json:"dialect"`
	Workers  int    `json:"workers"`
	Batch    int    `json:"batch"`
	// Rows is how many rows the task table was given over the run.
	Rows int `json:"rows"`
	// ReadyRows is how many rows were ready at the start of the last
	// slice; an earlier slice started with as many or fewer (the filler
	// never lowers them). Every claim sorts the due rows, so its cost
	// grows with them.
	ReadyRows       int      `json:"ready_rows"`
	DurationSeconds *float64 `json:"duration_seconds"`
	// Recommended is the claim strategy the probe recommends.
	Recommended string `json:"recommended"`
	// Work is one entry per kind of work measured, in order.
	Work []ClaimWorkResult `json:"work"`
	// Peer is the other claiming system run beside, null without one.
	Peer *PeerResult `json:"peer"`
	// Anchors are published figures of other claiming systems, with their
	// conditions; other hardware and other work per job, so never a ratio.
	Anchors []Anchor `json:"anchors"`
	Notes   []string `json:"notes"`
}

// ClaimWorkResult is one kind of work, raw and through the engine.
type ClaimWorkResult struct {
	// Work is WorkClaim, WorkComplete or WorkCompleteBatch.
	Work string `json:"work"`
	// Raw is the hand-written SQL on the driver's own connections, null
	// where the backend has none (Oracle, Dameng).
	Raw *ClaimRate `json:"raw"`
	// RawStatements are the raw SQL's statements.
	RawStatements []string              `json:"raw_statements"`
	Strategies    []ClaimStrategyResult `json:"strategies"`
}

// ClaimRate is rows of work per second over one measurement: rows claimed
// (WorkClaim) or completed (the others).
type ClaimRate struct {
	Rows   int64 `json:"rows"`
	Claims int64 `json:"claims"`
	// Lost is rows claimed whose completion found them no longer held.
	Lost          int64   `json:"lost"`
	Errors        int64   `json:"errors"`
	Seconds       float64 `json:"seconds"`
	RowsPerSecond float64 `json:"rows_per_second"`
}

func (r *ClaimRate) add(o ClaimRate) {
	r.Rows += o.Rows
	r.Claims += o.Claims
	r.Lost += o.Lost
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
	// FirstError is the first claim or completion that failed, when any
	// did.
	FirstError string `json:"first_error,omitempty"`
}

// PeerRate is what a peer did in one slice.
type PeerRate struct {
	Jobs    int64
	Seconds float64
}

// PeerResult is the peer run beside: its own jobs per second on the same
// database, workers and batch, claim and completion included.
type PeerResult struct {
	Name          string  `json:"name"`
	Jobs          int64   `json:"jobs"`
	Seconds       float64 `json:"seconds"`
	JobsPerSecond float64 `json:"jobs_per_second"`
	// Error is why it did not run, "" when it did.
	Error string `json:"error,omitempty"`
}

// Anchor is one published throughput figure with its conditions.
type Anchor struct {
	System string  `json:"system"`
	Figure float64 `json:"per_second"`
	Unit   string  `json:"unit"`
	Setup  string  `json:"setup"`
	Source string  `json:"source"`
}

// ClaimAnchors are published figures of other claiming systems, as their
// projects publish them.
var ClaimAnchors = []Anchor{
	{"River", 46000, "jobs", "river bench, 1M no-op jobs burned down, 2,000 goroutines, 8-core M2 MacBook Air, local PostgreSQL", "riverqueue.com/docs/benchmarks; riverqueue/river#278, PR #258"},
	{"db-scheduler lock-and-fetch", 10600, "executions", "4-core PostgreSQL on GCP, 4 scheduler VMs of 2 cores, 20 threads", "kagkarlsson/db-scheduler docs/performance.md (PR #175)"},
	{"graphile-worker", 183000, "jobs", "concurrentJobs 24, maxPoolSize 25, batched complete, a well-specced database", "worker.graphile.org/docs/performance"},
}

// RunClaims measures claim work on backend: it makes a task table of its
// own (dropped at the end), fills it (and tops it up between slices when
// rows are completed), and runs the raw SQL, each strategy and the peer in
// turns (Rounds slices each), Workers goroutines claiming Batch rows per
// call.
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
	r := &ClaimsReport{Dialect: db.Info.Dialect, Workers: p.Workers, Batch: p.Batch, Recommended: string(rec), Anchors: ClaimAnchors, Notes: []string{}}
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
	works := []string{WorkComplete, WorkCompleteBatch}
	lease := completeLease
	if p.NoComplete {
		works, lease = []string{WorkClaim}, claimOnlyLease
	}
	f := &filler{cl: setup, need: min(max(1000, p.Workers*p.Batch*8), 100000)}
	if err := f.topUp(ctx); err != nil {
		return nil, err
	}
	raw, _ := backend.(ClaimWork)
	if raw == nil {
		r.Notes = append(r.Notes, fmt.Sprintf("%s has no hand-written claim to compare with (no row limit beside FOR UPDATE): the engine's figures stand alone", db.Info.Dialect))
	}
	claimers := make([]*claimtable.Claimer, len(strategies))
	for i, s := range strategies {
		if claimers[i], err = claimtable.New(db.SQL, b, table, s, claimtable.Options{Lease: lease}); err != nil {
			return nil, err
		}
	}
	for _, w := range works {
		res := ClaimWorkResult{Work: w}
		if raw != nil {
			res.Raw = &ClaimRate{}
			texts := raw.RawClaimTexts(table.Name)
			res.RawStatements = []string{texts.Claim}
			switch w {
			case WorkComplete:
				res.RawStatements = append(res.RawStatements, texts.Complete)
			case WorkCompleteBatch:
				res.RawStatements = append(res.RawStatements, texts.CompleteBatch)
			}
		}
		for _, s := range strategies {
			res.Strategies = append(res.Strategies, ClaimStrategyResult{Strategy: string(s)})
		}
		r.Work = append(r.Work, res)
	}
	if p.Peer != nil {
		r.Peer = &PeerResult{Name: p.PeerName}
	}
	for rd, slice := range p.Budget.slices() {
		for wi, w := range works {
			res := &r.Work[wi]
			// The raw SQL and each strategy take turns, the first of one
			// round the last of the next: the task table grows done rows as
			// the run goes on, which must not weigh on one side only.
			var turns []func() error
			if raw != nil {
				turns = append(turns, func() error {
					step(p, fmt.Sprintf("raw SQL, %s, round %d of %d", w, rd+1, Rounds))
					rate, first, err := f.slice(ctx, w != WorkClaim, func() (ClaimRate, error) {
						return measureClaims(ctx, p.Workers, slice, rawWorker(db.SQL, raw, table.Name, lease, w, p.Batch))
					})
					if err != nil {
						return err
					}
					res.Raw.add(rate)
					if first != nil {
						r.Notes = appendOnce(r.Notes, fmt.Sprintf("raw SQL, %s: %v", w, first))
					}
					return nil
				})
			}
			for i, cl := range claimers {
				turns = append(turns, func() error {
					step(p, fmt.Sprintf("%s, %s, round %d of %d", strategies[i], w, rd+1, Rounds))
					rate, first, err := f.slice(ctx, w != WorkClaim, func() (ClaimRate, error) {
						return measureClaims(ctx, p.Workers, slice, engineWorker(cl, w, p.Batch))
					})
					if err != nil {
						return err
					}
					res.Strategies[i].Engine.add(rate)
					if first != nil && res.Strategies[i].FirstError == "" {
						res.Strategies[i].FirstError = first.Error()
					}
					return nil
				})
			}
			if rd%2 == 1 {
				slices.Reverse(turns)
			}
			for _, turn := range turns {
				if err := turn(); err != nil {
					return r, err
				}
			}
		}
		if p.Peer != nil && r.Peer.Error == "" {
			step(p, fmt.Sprintf("%s, round %d of %d", p.PeerName, rd+1, Rounds))
			pr, err := p.Peer(ctx, p.Workers, p.Batch, slice)
			if err != nil {
				r.Peer.Error = err.Error()
			} else {
				r.Peer.Jobs += pr.Jobs
				r.Peer.Seconds = round(r.Peer.Seconds+pr.Seconds, 6)
				if r.Peer.Seconds > 0 {
					r.Peer.JobsPerSecond = round(float64(r.Peer.Jobs)/r.Peer.Seconds, 1)
				}
			}
		}
		if err := ctx.Err(); err != nil {
			return r, err
		}
	}
	r.Rows, r.ReadyRows = f.added, f.level()
	if f.low > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d slices used more than half of the ready rows even after %d repeats with more rows: their rates may be the table's supply, not the claims'", f.low, lowRepeats))
	}
	for wi := range r.Work {
		res := &r.Work[wi]
		for i := range res.Strategies {
			if res.Raw != nil && res.Raw.RowsPerSecond > 0 {
				x := round(res.Strategies[i].Engine.RowsPerSecond/res.Raw.RowsPerSecond, 3)
				res.Strategies[i].EngineToRaw = &x
			}
		}
	}
	return r, nil
}

func appendOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// filler keeps enough ready rows in the task table: before each slice it
// adds rows so that at least need are left, need growing to twice the
// most rows one counted slice has used (and to four times the rows of a
// slice that ran low). It never lowers the rows ready at the start of a
// slice: a claim sorts every due row, so its cost grows with them, and a
// slice that started with fewer would be the cheaper for it.
type filler struct {
	cl           *claimtable.Claimer
	need, ready  int
	added        int
	mostPerSlice int
	// low counts the slices counted although they ran low (lowRepeats).
	low int
}

// lowRepeats bounds how often slice measures one slice again.
const lowRepeats = 4

// slice tops the table up and runs one measured slice of work. A slice of
// completed rows (completes) that used more than half the rows ready at
// its start ran low: its last claims sorted fewer rows and came back
// short or empty, so its rate is the table's supply, not the claim work
// (the first slices of a run, before the filler has seen a full one, run
// dry at any rate above need rows per slice). Such a slice is not
// counted: need becomes four times the rows it used, the table is filled
// to it and the slice runs again, at most lowRepeats times (then it
// counts, in low). The raw SQL and the engine are treated alike.
func (f *filler) slice(ctx context.Context, completes bool, run func() (ClaimRate, error)) (ClaimRate, error, error) {
	for repeat := 0; ; repeat++ {
		if err := f.topUp(ctx); err != nil {
			return ClaimRate{}, nil, err
		}
		start := f.ready
		rate, first := run()
		used := f.used(rate)
		if completes && 2*used > start && repeat < lowRepeats {
			if err := ctx.Err(); err != nil {
				return rate, first, err
			}
			f.need = max(f.need, 4*used)
			continue
		}
		if completes && 2*used > start {
			f.low++
		}
		f.mostPerSlice = max(f.mostPerSlice, used)
		return rate, first, nil
	}
}

// level is the rows ready at the start of a slice: need, or twice the
// most rows per slice.
func (f *filler) level() int { return max(f.need, 2*f.mostPerSlice) }

// topUp adds rows until level are ready.
func (f *filler) topUp(ctx context.Context) error {
	want := f.level()
	for f.ready < want {
		n := min(want-f.ready, 20000)
		rows := make([]claimtable.NewTask, n)
		for i := range rows {
			rows[i] = claimtable.NewTask{Type: "bench", Payload: []byte("payload"), Priority: int64((f.added + i) % 4)}
		}
		if err := f.cl.Add(ctx, rows...); err != nil {
			return err
		}
		f.ready += n
		f.added += n
	}
	return nil
}

// used counts the rows a slice claimed and completed or lost as no longer
// ready, and returns their number (a claim alone counts its rows too,
// though they come back: the table only grows the more for it).
func (f *filler) used(r ClaimRate) int {
	if r.Claims == 0 {
		return 0
	}
	n := int(r.Rows + r.Lost)
	f.ready -= n
	return n
}

func step(p ClaimPlan, s string) {
	if p.Progress != nil {
		p.Progress(s)
	}
}

// stepResult is one step of a worker: rows of work done, rows lost.
type stepResult struct{ rows, lost int }

// worker runs one worker's loop: it calls loop once, with the step that
// does one claim's work, and returns loop's error (or its own).
type worker func(ctx context.Context, owner string, loop func(step func() (stepResult, error)) error) error

// engineWorker is the engine's work w with cl.
func engineWorker(cl *claimtable.Claimer, w string, batch int) worker {
	return func(ctx context.Context, owner string, loop func(func() (stepResult, error)) error) error {
		return loop(func() (stepResult, error) {
			tasks, err := cl.Claim(ctx, claimtable.Request{Owner: owner, Max: batch})
			if err != nil || w == WorkClaim {
				return stepResult{rows: len(tasks)}, err
			}
			var res stepResult
			if w == WorkCompleteBatch {
				if len(tasks) == 0 {
					return res, nil
				}
				items := make([]claimtable.Finished, len(tasks))
				for i := range tasks {
					items[i] = claimtable.Finished{Task: &tasks[i], Outcome: claimtable.Completed}
				}
				lost, err := cl.FinishMany(ctx, items)
				return stepResult{rows: len(tasks) - len(lost), lost: len(lost)}, err
			}
			for i := range tasks {
				switch err := cl.Complete(ctx, &tasks[i]); {
				case errors.Is(err, claimtable.ErrNotClaimed):
					res.lost++
				case err != nil:
					return res, err
				default:
					res.rows++
				}
			}
			return res, nil
		})
	}
}

// rawWorker is the raw work w of raw on table, on a connection of db
// pinned for the worker's run.
func rawWorker(db *sql.DB, raw ClaimWork, table string, lease time.Duration, w string, batch int) worker {
	return func(ctx context.Context, owner string, loop func(func() (stepResult, error)) error) error {
		conn, err := db.Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		return raw.RawClaimWork(ctx, conn, table, lease, func(ops benchops.ClaimOps) error {
			return loop(func() (stepResult, error) {
				rows, err := ops.Claim(ctx, owner, batch)
				if err != nil || w == WorkClaim {
					return stepResult{rows: len(rows)}, err
				}
				var res stepResult
				if w == WorkCompleteBatch {
					if len(rows) == 0 {
						return res, nil
					}
					n, err := ops.CompleteBatch(ctx, owner, rows)
					return stepResult{rows: int(n), lost: len(rows) - int(n)}, err
				}
				for _, row := range rows {
					ok, err := ops.Complete(ctx, owner, row)
					if err != nil {
						return res, err
					}
					if ok {
						res.rows++
					} else {
						res.lost++
					}
				}
				return res, nil
			})
		})
	}
}

// measureClaims runs workers goroutines of work until the budget is
// spent, counting rows, claims and lost rows; a failed step is counted
// and the worker goes on.
func measureClaims(ctx context.Context, workers int, b Budget, work worker) (ClaimRate, error) {
	m := b.begin()
	ctx, cancel := context.WithTimeout(ctx, m.remaining()+30*time.Second)
	defer cancel()
	var mu sync.Mutex
	var rate ClaimRate
	var first error
	fail := func(err error) {
		mu.Lock()
		if first == nil && !errors.Is(err, context.Canceled) {
			first = err
		}
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := fmt.Sprintf("bench-%d", w)
			var rows, claims, lost, errs int64
			err := work(ctx, owner, func(step func() (stepResult, error)) error {
				for m.more() && ctx.Err() == nil {
					res, err := step()
					claims++
					rows += int64(res.rows)
					lost += int64(res.lost)
					if err != nil {
						errs++
						fail(err)
						continue
					}
					if m.add() {
						break
					}
				}
				return nil
			})
			if err != nil {
				errs++
				fail(err)
			}
			mu.Lock()
			rate.Rows += rows
			rate.Claims += claims
			rate.Lost += lost
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
