package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/claimtable"
	"github.com/schedlock/schedlock/internal/benchkit"
	"github.com/schedlock/schedlock/internal/dsn"
	"github.com/schedlock/schedlock/internal/output"
)

// defaultClaimWorkers is --workers with --claims when not given.
const defaultClaimWorkers = 4

// claimPlan validates the flags of `bench --claims`.
func (o *BenchOptions) claimPlan() (*dsn.DSN, benchkit.ClaimPlan, error) {
	usage := func(format string, args ...any) error { return usageErrorf(o.Command, format, args...) }
	p := benchkit.ClaimPlan{Workers: defaultClaimWorkers, Batch: o.Batch}
	switch {
	case o.workersSet && (o.Workers < 1 || o.Workers > maxBenchWorkers):
		return nil, p, usage("--workers must be between 1 and %d, got %d", maxBenchWorkers, o.Workers)
	case o.Batch < 1 || o.Batch > claimtable.MaxBatch:
		return nil, p, usage("--batch must be between 1 and %d rows per claim, got %d", claimtable.MaxBatch, o.Batch)
	case o.durationSet && o.Duration <= 0:
		return nil, p, usage("--duration must be positive, got %s", o.Duration)
	case o.cyclesSet && o.Cycles < 1:
		return nil, p, usage("--cycles must be at least 1, got %d", o.Cycles)
	case o.locksSet || o.Wait:
		return nil, p, usage("--locks and --wait measure locks, not --claims")
	}
	p.NoComplete = o.NoComplete
	if o.workersSet {
		p.Workers = o.Workers
	}
	switch o.Strategy {
	case "", strategyAll:
	case string(dialects.ClaimSkipLocked), string(dialects.ClaimReadPast), string(dialects.ClaimOptimistic):
		p.Strategies = []dialects.ClaimStrategy{dialects.ClaimStrategy(o.Strategy)}
	default:
		return nil, p, usage("--strategy %q with --claims: use skip-locked, readpast, optimistic or all", o.Strategy)
	}
	if o.cyclesSet {
		p.Budget.Cycles = o.Cycles
	} else {
		p.Budget.Duration = o.Duration
	}
	target, err := resolveAdminDSN(o.Factory, o.Global, o.Command)
	return target, p, err
}

func benchClaimsRun(ctx context.Context, o *BenchOptions) error {
	target, p, err := o.claimPlan()
	if err != nil {
		return err
	}
	backend, err := connectAdmin(ctx, target, o.Command)
	if err != nil {
		return err
	}
	defer backend.Close()
	if o.Peers {
		// One line when the peer cannot run; the rest of the bench runs.
		if peer, err := benchkit.RiverPeer(backend, target.String()); err != nil {
			fmt.Fprintf(o.IO.ErrOut, "schedlock: --peers: %s; the rest of the bench runs\n", o.Factory.Scrubber.String(err.Error()))
		} else {
			p.Peer, p.PeerName = peer, benchkit.RiverPeerName
		}
	}
	var progress *benchProgress
	if o.IO.IsStderrTTY() && !o.Global.Quiet {
		progress = &benchProgress{w: o.IO.ErrOut}
		p.Progress = progress.step
	}
	r, runErr := benchkit.RunClaims(ctx, backend, p)
	if progress != nil {
		progress.clear()
	}
	if r == nil {
		return o.benchError(ctx, runErr, target)
	}
	r.Target, r.Database = target.Redacted(), o.Factory.Scrubber.String(output.DescribeDatabase(backend.Detected()))
	if r.Peer != nil && r.Peer.Error != "" {
		r.Peer.Error = o.Factory.Scrubber.String(r.Peer.Error)
		fmt.Fprintf(o.IO.ErrOut, "schedlock: --peers: %s did not run: %s\n", r.Peer.Name, r.Peer.Error)
	}
	header := fmt.Sprintf("%s on %s: %d workers, %d rows per claim, %s rows ready at the start of a slice", r.Target, r.Database, r.Workers, r.Batch, grouped(int64(r.ReadyRows)))
	if err := o.writeReport(r, header, func() output.TableData { return claimsBenchTable(r) }, r.Notes); err != nil {
		return err
	}
	if runErr != nil {
		return o.benchError(ctx, runErr, target)
	}
	return nil
}

// claimWorkWords are the words of each kind of claim work in the table.
var claimWorkWords = map[string]string{
	benchkit.WorkClaim:         "claim alone",
	benchkit.WorkComplete:      "claim + complete each row",
	benchkit.WorkCompleteBatch: "claim + complete the batch",
}

// claimsBenchTable is the claims report as one table: for each kind of
// work the raw SQL, then each strategy beside it; the peer run beside;
// then the published figures with their conditions (never a ratio).
func claimsBenchTable(r *benchkit.ClaimsReport) output.TableData {
	t := output.TableData{Header: []string{"MEASUREMENT", "STRATEGY", "WHAT", "RESULT", "COMPARED"}}
	what := fmt.Sprintf("%d workers × %d rows", r.Workers, r.Batch)
	for _, w := range r.Work {
		words := claimWorkWords[w.Work]
		if w.Raw != nil {
			t.Rows = append(t.Rows, []string{words, "-", "raw SQL, " + what, perSecond(w.Raw.RowsPerSecond, "rows"), errorsCell(w.Raw.Errors, w.Raw.Lost)})
		}
		for _, s := range w.Strategies {
			label := s.Strategy
			if s.Strategy == r.Recommended {
				label += " (recommended)"
			}
			compared := times(s.EngineToRaw, "raw")
			if e := errorsCell(s.Engine.Errors, s.Engine.Lost); e != "" {
				compared = strings.TrimPrefix(compared+", "+e, ", ")
			}
			t.Rows = append(t.Rows, []string{words, label, "engine, " + what, perSecond(s.Engine.RowsPerSecond, "rows"), compared})
		}
	}
	if p := r.Peer; p != nil {
		result := perSecond(p.JobsPerSecond, "jobs")
		if p.Error != "" {
			result = "did not run"
		}
		t.Rows = append(t.Rows, []string{"peer", "-", fmt.Sprintf("%s, %d job goroutines", p.Name, r.Workers*r.Batch), result, "same database and machine, in the same rounds; its own no-op jobs, fetched and completed its way"})
	}
	for _, a := range r.Anchors {
		t.Rows = append(t.Rows, []string{"published", "-", a.System, perSecond(a.Figure, a.Unit), a.Setup})
	}
	return t
}

func errorsCell(errs, lost int64) string {
	var parts []string
	if errs > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", errs))
	}
	if lost > 0 {
		parts = append(parts, fmt.Sprintf("%d rows lost", lost))
	}
	return strings.Join(parts, ", ")
}
