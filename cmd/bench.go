package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
	"github.com/schedlock/schedlock/internal/benchkit"
	"github.com/schedlock/schedlock/internal/dsn"
	"github.com/schedlock/schedlock/internal/iostreams"
	"github.com/schedlock/schedlock/internal/output"
)

// Bounds of the bench flags.
const (
	maxBenchWorkers = 1024
	maxBenchLocks   = 1_000_000
	maxBenchLeases  = 1_000_000
	// strategyAll is --strategy all: every strategy the database supports.
	strategyAll = "all"
)

// BenchOptions are the inputs of `schedlock bench`.
type BenchOptions struct {
	IO      *iostreams.IOStreams
	Factory *Factory
	Global  *GlobalOptions
	Command string // command path, for usage errors

	Strategy string
	Preset   string
	Table    string
	Workers  int
	Locks    int
	Leases   int
	Wait     bool
	Duration time.Duration
	Cycles   int64
	Claims   bool // --claims: task-row claims instead of locks (bench_claims.go)
	Batch    int
	// NoComplete (--no-complete): with --claims, the claim alone.
	NoComplete bool
	// Peers (--peers): with --claims, run the peer (River) beside.
	Peers bool

	// Which of the flags were given, for checks that tell "0" from
	// "not asked for".
	workersSet, locksSet, leasesSet, durationSet, cyclesSet bool
}

// NewCmdBench builds `schedlock bench`. runF replaces the run function in
// tests.
func NewCmdBench(f *Factory, g *GlobalOptions, runF func(context.Context, *BenchOptions) error) *cobra.Command {
	opts := &BenchOptions{IO: f.IO, Factory: f, Global: g}
	c := &cobra.Command{
		Use:   "bench",
		Short: "Measure lock throughput, contention, scale and hand-over on a database or lock store",
		Long: `bench measures what the locks cost on a database or lock store, each figure
beside the limit it competes with:

  - lock cycles (default): acquire+release per second per strategy, beside
    the round trip of "SELECT 1" on one connection (a cycle is two round
    trips, so half of it is the limit) and, for session locks, beside the
    database's raw try-lock and unlock statements on one connection; on a
    lock store, beside its trivial command and its raw take and release
    on one client;
  - --workers N: N workers on one lock name, successful critical sections
    and refusals per second, the engine beside the raw statements, then the
    same N workers waiting for the lock instead of retrying;
  - --locks N: N distinct session locks (on a lock store: leases) held at
    once by this process: the connections they use (counted by the server
    where it can say, else by the client pool; not counted on a store),
    the time to take all and to release all, and the extra client memory;
  - --leases N: N table leases (on a lock store: its leases) of 30 s
    at-most held at once by one handle through WithLock for --duration
    (default 35s: three renewals each): the leases still held and those
    lost (must be 0), the refreshes and the statements that carried them
    per second, the most connections the pool opened beside its limit
    (x-max-conns), the time to take all and to release all, and the
    extra client memory;
  - --wait: the latency from a holder's release to a waiting acquire, over
    many hand-overs (min, median, mean, p99, max).

--workers, --locks, --leases and --wait choose their measurements instead of the lock
cycles, and combine. Each measurement runs for --duration (default 3s) or
--cycles cycles. The table strategy runs on a temporary lock table that is
created and dropped (--preset picks its layout; on a store, a fresh key
prefix), or on --table as it is.
Lock names start with schedlock-bench-, so they never meet real ones.

Exit codes: 0 measured; 1 error (a lock or statement failed; the figures up
to that point are still printed); 2 usage error; 130 interrupted. See
docs/bench.md for the JSON fields.`,
		Example: `  # Lock cycles per second of every strategy, beside SELECT 1 and the raw statements
  schedlock bench --dsn 'postgres://app@db1:5432/jobs'

  # 8 workers on one name: critical sections and refusals per second
  schedlock bench --dsn 'mysql://app@db2:3306/jobs' --workers 8

  # 1,000 session locks held at once: connections, time, memory
  schedlock bench --dsn 'postgres://app@db1:5432/jobs' --locks 1000

  # 10,000 leases of 30 s held by one handle for 35 s: lost, refresh statements, connections
  schedlock bench --dsn 'postgres://app@db1:5432/jobs?x-max-conns=4' --leases 10000

  # Hand-over latency from a release to a waiter, 200 hand-overs, as JSON
  schedlock bench --wait --cycles 200 -o json

  # Only the lease table, ShedLock's layout, 10 seconds per measurement
  schedlock bench --strategy table --preset shedlock --duration 10s`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			opts.Command = c.CommandPath()
			fl := c.Flags()
			opts.workersSet, opts.locksSet, opts.leasesSet = fl.Changed("workers"), fl.Changed("locks"), fl.Changed("leases")
			opts.durationSet, opts.cyclesSet = fl.Changed("duration"), fl.Changed("cycles")
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return benchRun(c.Context(), opts)
		},
	}
	fl := c.Flags()
	fl.StringVar(&opts.Strategy, "strategy", "", "session, table or all (default all: every strategy the database supports)")
	fl.StringVar(&opts.Preset, "preset", "", "lock-table layout: "+strings.Join(dialects.Presets(), ", ")+" (table strategy; default schedlock)")
	fl.StringVar(&opts.Table, "table", "", "existing lock table to use, optionally schema.table (default: a temporary table)")
	fl.IntVar(&opts.Workers, "workers", 0, "measure N workers contending for one lock name")
	fl.IntVar(&opts.Locks, "locks", 0, "measure N distinct session locks held at once")
	fl.IntVar(&opts.Leases, "leases", 0, "measure N table leases of 30s held at once by one handle, kept alive by their refreshes")
	fl.BoolVar(&opts.Wait, "wait", false, "measure the hand-over latency from a release to a waiting acquire")
	durationVar(fl, &opts.Duration, "duration", benchkit.DefaultDuration, "length of each measurement, e.g. 500ms or 10s")
	fl.Int64Var(&opts.Cycles, "cycles", 0, "run each measurement for this many cycles (hand-overs with --wait) instead of --duration")
	fl.BoolVar(&opts.Claims, "claims", false, "measure task-row claim work: rows claimed and completed per second per claim strategy, per row and as a batch, beside the hand-written SQL of the same work")
	fl.IntVar(&opts.Batch, "batch", 10, "rows per claim (with --claims)")
	fl.BoolVar(&opts.NoComplete, "no-complete", false, "with --claims: measure the claim alone (rows come back after a 1 ms lease), not the completion")
	fl.BoolVar(&opts.Peers, "peers", false, "with --claims on PostgreSQL: run River beside, on the same database (needs the schedlock-peer-river program: see docs/bench.md)")
	_ = c.RegisterFlagCompletionFunc("strategy", locksCompletion([]string{string(dialects.StrategySession), string(dialects.StrategyTable), dialects.StrategyLeaseAlias, strategyAll}))
	_ = c.RegisterFlagCompletionFunc("preset", locksCompletion(dialects.Presets()))
	return c
}

// plan validates the flags and the DSN; every error is a usage error.
func (o *BenchOptions) plan() (*dsn.DSN, benchkit.Plan, error) {
	usage := func(format string, args ...any) error { return usageErrorf(o.Command, format, args...) }
	p := benchkit.Plan{}
	switch {
	case o.workersSet && (o.Workers < 1 || o.Workers > maxBenchWorkers):
		return nil, p, usage("--workers must be between 1 and %d, got %d", maxBenchWorkers, o.Workers)
	case o.locksSet && (o.Locks < 1 || o.Locks > maxBenchLocks):
		return nil, p, usage("--locks must be between 1 and %d, got %d", maxBenchLocks, o.Locks)
	case o.leasesSet && (o.Leases < 1 || o.Leases > maxBenchLeases):
		return nil, p, usage("--leases must be between 1 and %d, got %d", maxBenchLeases, o.Leases)
	case o.durationSet && o.Duration <= 0:
		return nil, p, usage("--duration must be positive, got %s", o.Duration)
	case o.cyclesSet && o.Cycles < 1:
		return nil, p, usage("--cycles must be at least 1, got %d", o.Cycles)
	}
	target, err := resolveAdminDSN(o.Factory, o.Global, o.Command)
	if err != nil {
		return nil, p, err
	}
	strategy := firstNonEmpty(o.Strategy, target.Options[dsn.OptStrategy])
	switch strategy {
	case strategyAll, "":
	default:
		s, err := dialects.ParseStrategy(strategy)
		if err != nil {
			return nil, p, usage("--strategy: unknown strategy %q: use session, table or all", strategy)
		}
		p.Strategies = []dialects.Strategy{s}
	}
	p.Table = dialects.Table{Preset: firstNonEmpty(o.Preset, target.Options[dsn.OptPreset]), Name: firstNonEmpty(o.Table, target.Options[dsn.OptTable])}
	if _, err := p.Table.Schema(); err != nil {
		return nil, p, &UsageError{Err: err, Command: o.Command}
	}
	onlySession := len(p.Strategies) == 1 && p.Strategies[0] == dialects.StrategySession
	if onlySession && (o.Preset != "" || o.Table != "") {
		return nil, p, usage("--table and --preset apply to the table strategy, not --strategy session")
	}
	if onlySession && o.Leases > 0 {
		return nil, p, usage("--leases holds table leases: use --strategy table, or leave --strategy out")
	}
	p.Workers, p.Locks, p.HandOver, p.Leases = o.Workers, o.Locks, o.Wait, o.Leases
	p.Cycles = o.Workers == 0 && o.Locks == 0 && !o.Wait && o.Leases == 0
	if o.Leases > 0 && o.durationSet {
		p.LeaseHold = o.Duration
	}
	if o.cyclesSet {
		p.Budget.Cycles = o.Cycles
	} else {
		p.Budget.Duration = o.Duration
	}
	return target, p, nil
}

// onlyTable reports whether p measures the table strategy alone.
func (o *BenchOptions) onlyTable(p benchkit.Plan) bool {
	return len(p.Strategies) == 1 && p.Strategies[0] == dialects.StrategyTable
}

func benchRun(ctx context.Context, o *BenchOptions) error {
	if o.Claims {
		return benchClaimsRun(ctx, o)
	}
	if o.NoComplete || o.Peers {
		return usageErrorf(o.Command, "--no-complete and --peers apply to --claims")
	}
	target, p, err := o.plan()
	if err != nil {
		return err
	}
	backend, err := connectAdmin(ctx, target, o.Command)
	if err != nil {
		return err
	}
	defer backend.Close()
	if _, sql := sqlkit.Of(backend); sql && o.onlyTable(p) && p.Locks > 0 {
		return usageErrorf(o.Command, "--locks measures session locks held at once (a table lock holds no connection); use --strategy session")
	}
	database := o.Factory.Scrubber.String(output.DescribeDatabase(backend.Detected()))
	if o.Global.Verbose {
		fmt.Fprintf(o.IO.ErrOut, "schedlock: benchmarking %s on %s\n", target.Redacted(), database)
	}
	var progress *benchProgress
	if o.IO.IsStderrTTY() && !o.Global.Quiet {
		progress = &benchProgress{w: o.IO.ErrOut}
		p.Progress = progress.step
	}
	report, runErr := benchkit.Run(ctx, backend, p)
	if progress != nil {
		progress.clear()
	}
	if runErr != nil && !measuredAnything(report) {
		return o.benchError(ctx, runErr, target)
	}
	report.Target, report.Database = target.Redacted(), database
	if err := o.render(report); err != nil {
		return err
	}
	if runErr != nil {
		return o.benchError(ctx, runErr, target)
	}
	return nil
}

// benchError is the command's error for err: bad tables and strategies the
// database lacks are usage errors, --timeout says so.
func (o *BenchOptions) benchError(ctx context.Context, err error, target *dsn.DSN) error {
	var tooMany *benchkit.LeaseLimitError
	switch {
	case errors.As(err, &tooMany):
		return &UsageError{Err: fmt.Errorf("--leases %d is above what %s can hold: at most %d (%s)", tooMany.Asked, backendName(target), tooMany.Most, tooMany.Limit), Command: o.Command}
	case errors.Is(err, dialects.ErrInvalid), errors.Is(err, dialects.ErrUnsupported), errors.Is(err, dialects.ErrNoTable):
		return &UsageError{Err: target.Scrub(err), Command: o.Command}
	case errors.Is(err, context.DeadlineExceeded) && o.Global.Timeout > 0 && ctx.Err() != nil:
		return fmt.Errorf("bench stopped by --timeout %s: %w", o.Global.Timeout, target.Scrub(err))
	}
	return target.Scrub(err)
}

// backendName is the DSN's family as the bench names its database.
func backendName(target *dsn.DSN) string { return target.Family }

// measuredAnything reports whether r holds at least one measurement.
func measuredAnything(r *benchkit.Report) bool {
	return r != nil && (r.RoundTrip != nil || len(r.Cycles) > 0 || len(r.Contention) > 0 || r.HeldLocks != nil || r.Leases != nil || len(r.HandOver) > 0)
}

// render writes the report to stdout and, for tables, its notes to stderr.
func (o *BenchOptions) render(r *benchkit.Report) error {
	return o.writeReport(r, r.Target+" on "+r.Database, func() output.TableData { return benchTable(r) }, r.Notes)
}

// writeReport writes report in --output's format; a table (built by
// table) is headed by header on a terminal, and notes go to stderr.
func (o *BenchOptions) writeReport(report any, header string, table func() output.TableData, notes []string) error {
	var buf bytes.Buffer
	var err error
	switch o.Global.Format {
	case output.JSON:
		err = output.WriteJSON(&buf, report)
	case output.YAML:
		err = output.WriteYAML(&buf, report)
	default:
		if o.IO.IsStdoutTTY() {
			fmt.Fprintln(&buf, header)
		}
		t := table()
		t.Width = o.IO.TerminalWidth()
		err = output.WriteTable(&buf, t, o.IO.IsStdoutTTY())
	}
	if err != nil {
		return err
	}
	if _, err := io.WriteString(o.IO.Out, o.Factory.Scrubber.String(buf.String())); err != nil {
		return err
	}
	if o.Global.Format == output.Table && !o.Global.Quiet {
		for _, n := range notes {
			fmt.Fprintln(o.IO.ErrOut, o.Factory.Scrubber.String("schedlock: note: "+n))
		}
	}
	return nil
}

// benchTable is the report as one table: a row per figure, with what it
// is compared with.
func benchTable(r *benchkit.Report) output.TableData {
	t := output.TableData{Header: []string{"MEASUREMENT", "STRATEGY", "WHAT", "RESULT", "COMPARED"}}
	row := func(cells ...string) { t.Rows = append(t.Rows, cells) }
	if rt := r.RoundTrip; rt != nil {
		row("round trip", "-", rt.Statement+" on one connection", perSecond(rt.CyclesPerSecond, "round trips"), fmt.Sprintf("limit %s", perSecond(rt.CyclesPerSecond/2, "cycles")))
	}
	for _, c := range r.Cycles {
		if c.Raw != nil {
			row("lock cycles", c.Strategy, "raw statements, one driver connection", perSecond(c.Raw.CyclesPerSecond, "cycles"), times(ratioOf(c.Raw.CyclesPerSecond, c.LimitCyclesPerSecond), "limit"))
		}
		if c.Engine.Seconds == 0 {
			continue // stopped before the engine was measured
		}
		compared := times(c.EngineToLimit, "limit")
		if c.EngineToRaw != nil {
			compared = times(c.EngineToRaw, "raw") + ", " + compared
		}
		row("lock cycles", c.Strategy, "engine", perSecond(c.Engine.CyclesPerSecond, "cycles"), compared)
	}
	for _, c := range r.Contention {
		what := fmt.Sprintf("contention, %d workers", c.Workers)
		if c.Raw != nil {
			row(what, c.Strategy, "raw statements", contended(*c.Raw), "")
		}
		row(what, c.Strategy, "engine, try", contended(c.Engine), times(c.EngineToRaw, "raw"))
		if c.RawWaiting != nil {
			row(what, c.Strategy, "raw statements, waiting", contended(*c.RawWaiting), "")
		}
		row(what, c.Strategy, "engine, waiting", contended(c.EngineWaiting), times(c.EngineWaitingToRawWaiting, "raw waiting"))
	}
	if h := r.HeldLocks; h != nil {
		what := fmt.Sprintf("%d locks held", h.Locks)
		taken := fmt.Sprintf("%d of %d in %s", h.Acquired, h.Locks, seconds(h.TakeAllSeconds))
		row(what, h.Strategy, "take all", taken, rateOf(h.Acquired, h.TakeAllSeconds, "locks"))
		row(what, h.Strategy, "release all", seconds(h.ReleaseAllSeconds), rateOf(h.Acquired, h.ReleaseAllSeconds, "locks"))
		if h.ConnectionsSource != benchkit.SourceNone {
			row(what, h.Strategy, "connections", fmt.Sprintf("%d (%s)", h.Connections, h.ConnectionsSource), fmt.Sprintf("client pool: %d in use", h.ClientOpenConnections))
		}
		row(what, h.Strategy, "extra client memory", "heap "+bytesText(h.ExtraHeapAllocBytes), "from the OS "+bytesText(h.ExtraSysBytes))
		if h.Error != nil {
			row(what, h.Strategy, "error", *h.Error, "")
		}
	}
	if l := r.Leases; l != nil {
		what := fmt.Sprintf("%d leases of %s", l.Leases, seconds(l.AtMostSeconds))
		row(what, l.Strategy, "take all", fmt.Sprintf("%d of %d in %s", l.Acquired, l.Leases, seconds(l.TakeAllSeconds)), rateOf(l.Acquired, l.TakeAllSeconds, "leases"))
		row(what, l.Strategy, "held after "+seconds(l.HoldSeconds), fmt.Sprintf("%d held, %d lost", l.Held, l.Lost), "lost must be 0")
		statements := "not counted"
		if l.RefreshStatementsPerSecond != nil {
			statements = smallRate(*l.RefreshStatementsPerSecond, "statements")
		}
		row(what, l.Strategy, "refreshes", perSecond(l.RefreshesPerSecond, "refreshes"), statements)
		if l.MaxConnections != nil {
			row(what, l.Strategy, "connections", fmt.Sprintf("at most %d open", *l.MaxConnections), fmt.Sprintf("limit %d (x-max-conns)", *l.ConnectionLimit))
		}
		row(what, l.Strategy, "release all", seconds(l.ReleaseAllSeconds), rateOf(l.Acquired, l.ReleaseAllSeconds, "leases"))
		row(what, l.Strategy, "extra client memory", "heap "+bytesText(l.ExtraHeapAllocBytes), "from the OS "+bytesText(l.ExtraSysBytes))
		if l.Error != nil {
			row(what, l.Strategy, "error", *l.Error, "")
		}
	}
	for _, h := range r.HandOver {
		row("hand-over", h.Strategy, fmt.Sprintf("release to waiter, %d times", h.HandOvers),
			fmt.Sprintf("median %s ms, p90 %s ms, p99 %s ms", ms(h.MedianMS), ms(h.P90MS), ms(h.P99MS)),
			fmt.Sprintf("min %s, mean %s, max %s ms", ms(h.MinMS), ms(h.MeanMS), ms(h.MaxMS)))
	}
	return t
}

func ratioOf(a, b float64) *float64 {
	if b == 0 {
		return nil
	}
	r := a / b
	return &r
}

// times writes a ratio as "0.84× what"; "" for none.
func times(r *float64, what string) string {
	if r == nil {
		return ""
	}
	return fmt.Sprintf("%.2f× %s", *r, what)
}

// rateOf writes n per secs as a rate; "" when no time was measured.
func rateOf(n int, secs float64, unit string) string {
	if secs <= 0 {
		return ""
	}
	return perSecond(float64(n)/secs, unit)
}

// smallRate is perSecond with one decimal below 100 a second.
func smallRate(v float64, unit string) string {
	if v < 100 {
		return fmt.Sprintf("%.1f %s/s", v, unit)
	}
	return perSecond(v, unit)
}

func perSecond(v float64, unit string) string {
	return grouped(int64(v+0.5)) + " " + unit + "/s"
}

func contended(c benchkit.Contended) string {
	return perSecond(c.SuccessesPerSecond, "successes") + ", " + perSecond(c.RefusalsPerSecond, "refusals")
}

func seconds(s float64) string {
	if s < 1 {
		return fmt.Sprintf("%.1f ms", s*1000)
	}
	return fmt.Sprintf("%.2f s", s)
}

func ms(v float64) string { return fmt.Sprintf("%.2f", v) }

// bytesText writes a signed byte count in KiB or MiB: "+12.3 MiB".
func bytesText(n int64) string {
	sign := "+"
	if n < 0 {
		sign, n = "-", -n
	}
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%s%.1f MiB", sign, float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%s%.1f KiB", sign, float64(n)/(1<<10))
	}
	return fmt.Sprintf("%s%d B", sign, n)
}

// grouped writes n with thousands separators: 12,345.
func grouped(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + grouped(-n)
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// benchProgress shows the running measurement on one terminal line,
// rewritten in place, and clears it when done. Used only when stderr is a
// terminal.
type benchProgress struct {
	mu sync.Mutex
	w  io.Writer
	n  int
}

func (p *benchProgress) step(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	fmt.Fprintf(p.w, "\r\x1b[K[%d] %s…", p.n, s)
}

func (p *benchProgress) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n > 0 {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
