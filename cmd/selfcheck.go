package cmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/dsn"
	"github.com/schedlock/schedlock/internal/iostreams"
	"github.com/schedlock/schedlock/internal/output"
)

// SelfcheckOptions are the inputs of `schedlock selfcheck`.
type SelfcheckOptions struct {
	IO      *iostreams.IOStreams
	Factory *Factory
	Global  *GlobalOptions
	Command string // command path, for usage errors

	Strategy string
	Preset   string
	Table    string
	Checks   []string
	// CheckTimeout bounds each check; zero: checks.DefaultCheckTimeout.
	CheckTimeout time.Duration
	// AllowRisks are the risks of two holders accepted by --allow-risk.
	AllowRisks []string

	checkTimeoutGiven bool // on the command line or by its variable
}

// NewCmdSelfcheck builds `schedlock selfcheck`. runF replaces the run
// function in tests.
func NewCmdSelfcheck(f *Factory, g *GlobalOptions, runF func(context.Context, *SelfcheckOptions) error) *cobra.Command {
	opts := &SelfcheckOptions{IO: f.IO, Factory: f, Global: g}
	c := &cobra.Command{
		Use:   "selfcheck",
		Short: "Prove that locking works on a database before it goes live",
		Long: `selfcheck runs the lock contract against a database: mutual exclusion, try
without hanging, leases, owner checks, refresh, fencing tokens, the database
clock, and (session strategy) that a dropped connection frees the lock.
Whatever it creates (its temporary lock table, its locks) it removes.

With no DSN it runs on an embedded SQLite file in the user cache directory
($XDG_CACHE_HOME/schedlock/selfcheck.db), so it works with no server at all.
A SQLite file named by a DSN must exist; selfcheck does not create it.

The report goes to stdout (-o table, json, yaml, markdown or junit). Table and
markdown end with the line "N passed, N warned, N failed, N skipped"; for
json, yaml and junit that line goes to stderr. On a terminal, a line on
stderr shows the running check, "[N/total] ID: title". Exit code 3 means a
check failed.

Each check is bounded by --check-timeout (1m; the destructive checks at the
end, twice that): a check still running then fails as timed out, and the
run goes on with the next one. --timeout bounds the whole run.

A store that can hand a lock to two holders — Redis without persistence or
with RDB snapshots only, an evicting maxmemory-policy, asynchronous replicas
(Sentinel, Cluster) — fails the probe.two-holders check: 'schedlock detect'
lists its risks. --allow-risk NAME accepts one by its name (repeatable), and
the check then warns of it instead.`,
		Example: `  # No server needed: the embedded SQLite database
  schedlock selfcheck

  # PostgreSQL, only the lease-table strategy, on a ShedLock table layout
  schedlock selfcheck --dsn 'postgres://app@db1:5432/jobs' --strategy table --preset shedlock

  # MariaDB, as JUnit for the CI pipeline (exit 3 when a check fails)
  schedlock selfcheck --dsn 'mysql://app@db2:3306/jobs' -o junit > selfcheck.xml

  # A throwaway Redis without persistence, its risk accepted
  schedlock selfcheck --dsn 'redis://127.0.0.1:6379/0' --allow-risk no-persistence

  # Options in the DSN itself
  schedlock selfcheck --dsn 'postgres://app@db1/jobs?x-strategy=table&x-table=ops.job_lock'`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			opts.Command = c.CommandPath()
			opts.checkTimeoutGiven = c.Flags().Changed("check-timeout")
			if runF != nil {
				return runF(c.Context(), opts)
			}
			return selfcheckRun(c.Context(), opts)
		},
	}
	fl := c.Flags()
	fl.StringVar(&opts.Strategy, "strategy", "", "check only this strategy: session or table (alias lease) (default: every one the database supports)")
	fl.StringVar(&opts.Preset, "preset", "", "lock-table layout: "+strings.Join(dialects.Presets(), ", ")+" (default schedlock)")
	fl.StringVar(&opts.Table, "table", "", "lock table to check, created if missing and then dropped (default: a temporary table)")
	fl.StringSliceVar(&opts.Checks, "check", nil, "run only these check IDs (repeatable)")
	durationVar(fl, &opts.CheckTimeout, "check-timeout", checks.DefaultCheckTimeout, "bound each check, e.g. 30s: one still running then fails as timed out and the run goes on (destructive checks get twice as long)")
	fl.StringSliceVar(&opts.AllowRisks, "allow-risk", nil, "accept this risk of two holders (repeatable): "+strings.Join(dialects.TwoHolderRiskIDs(), ", "))
	return c
}

// selfcheckPlan is what selfcheck will run, from flags and x- options.
type selfcheckPlan struct {
	target     *dsn.DSN
	source     string // where the DSN came from
	embedded   bool   // target is the embedded cache file, created if missing
	strategies []dialects.Strategy
	tables     []dialects.Table
	namespace  string
}

// plan resolves the DSN and the options; every error is a usage error.
func (o *SelfcheckOptions) plan() (*selfcheckPlan, error) {
	if err := checks.CheckAllowRisks(o.AllowRisks); err != nil {
		return nil, &UsageError{Err: fmt.Errorf("--allow-risk: %w", err), Command: o.Command}
	}
	f := o.Factory
	if o.CheckTimeout < 0 || o.checkTimeoutGiven && o.CheckTimeout == 0 {
		return nil, usageErrorf(o.Command, "--check-timeout must be positive, got %s", o.CheckTimeout)
	}
	embedded := false
	d, source, err := resolveTarget(f, o.Global, o.Command, func() (string, string, error) {
		embedded = true
		path, err := selfcheckDBPath(f)
		return path, "the embedded SQLite file", err
	})
	if err != nil {
		return nil, err
	}
	nameConnections(d, o.Command)
	p := &selfcheckPlan{target: d, source: source, embedded: embedded}
	if p.namespace, err = o.Global.namespace(o.Command, d); err != nil {
		return nil, err
	}

	strategy := firstNonEmpty(o.Strategy, d.Options[dsn.OptStrategy])
	if strategy != "" {
		s, err := dialects.ParseStrategy(strategy)
		if err != nil {
			return nil, &UsageError{Err: err, Command: o.Command}
		}
		p.strategies = []dialects.Strategy{s}
	}
	table := dialects.Table{Preset: firstNonEmpty(o.Preset, d.Options[dsn.OptPreset]), Name: firstNonEmpty(o.Table, d.Options[dsn.OptTable])}
	// On ShedLock's Redis layout the namespace is the environment: a
	// namespace that layout refuses (or an environment given twice) is
	// refused here as by run. The run itself stays in an environment of
	// its own (below), its lock names in the namespace.
	if _, _, err := placeNamespace(o.Command, d, table, p.namespace); err != nil {
		return nil, err
	}
	if table != (dialects.Table{}) {
		if _, err := table.Schema(); err != nil {
			return nil, &UsageError{Err: err, Command: o.Command}
		}
		if table.Name == "" {
			// A preset alone: check its layout on a temporary table, never
			// on the real one of that name.
			table.Name = checks.NewPrefix() + "_" + table.Preset
		}
		p.tables = []dialects.Table{table}
	}
	if err := p.inTableTimeZone(o.Global, o.Command); err != nil {
		return nil, err
	}
	return p, nil
}

func selfcheckRun(ctx context.Context, o *SelfcheckOptions) error {
	g, f, io := o.Global, o.Factory, o.IO
	p, err := o.plan()
	if err != nil {
		return err
	}
	if g.Verbose {
		fmt.Fprintf(io.ErrOut, "schedlock: checking %s (from %s)\n", p.target.Redacted(), p.source)
	}
	// A file named by a DSN must exist, as for the other commands; only the
	// embedded cache file is created on first use.
	connect := func(ctx context.Context) (dialects.Backend, error) { return connectAdmin(ctx, p.target, o.Command) }
	if p.embedded {
		connect = p.target.Connect
	}
	db, err := connect(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	if g.Verbose {
		fmt.Fprintf(io.ErrOut, "schedlock: connected to %s\n", f.Scrubber.String(output.DescribeDatabase(db.Detected())))
	}

	cfg := checks.Config{Backend: db, Strategies: p.strategies, Tables: p.tables, Namespace: p.namespace, Only: o.Checks, CheckTimeout: o.CheckTimeout, AllowRisks: o.AllowRisks}
	var progress *progressLine
	if io.IsStderrTTY() && !g.Quiet {
		progress = &progressLine{w: io.ErrOut, width: io.TerminalWidth}
		cfg.Progress = progress.update
		cfg.Total = progress.setTotal
	}
	report, runErr := checks.Run(ctx, cfg)
	if progress != nil {
		progress.clear()
	}
	if report == nil {
		if errors.Is(runErr, dialects.ErrInvalid) || errors.Is(runErr, dialects.ErrUnsupported) {
			return &UsageError{Err: p.target.Scrub(runErr), Command: o.Command}
		}
		return p.target.Scrub(runErr)
	}
	report.Target = p.target.Redacted()
	scrubReport(report, f.Scrubber)
	cliResults(report)

	var buf bytes.Buffer
	hostname, _ := os.Hostname()
	ropts := output.ReportOptions{TTY: io.IsStdoutTTY(), Color: io.ColorEnabled(), Width: io.TerminalWidth(), Hostname: hostname}
	if err := output.WriteReport(&buf, report, g.Format, ropts); err != nil {
		return err
	}
	if _, err := io.Out.Write([]byte(f.Scrubber.String(buf.String()))); err != nil {
		return err
	}
	if g.Format != output.Table && g.Format != output.Markdown && !g.Quiet {
		fmt.Fprintln(io.ErrOut, output.Summary(report))
	}
	if runErr != nil {
		if errors.Is(runErr, context.DeadlineExceeded) && g.Timeout > 0 {
			return fmt.Errorf("selfcheck stopped by --timeout %s after %d checks; the report covers those", g.Timeout, len(report.Results))
		}
		return p.target.Scrub(runErr)
	}
	if report.Failed > 0 {
		return &ExitError{Code: CodeNegative, Err: fmt.Errorf("%d of %d checks failed on %s", report.Failed, len(report.Results), p.target.Redacted())}
	}
	return nil
}

// scrubReport removes known passwords from every text a report carries: a
// driver error in a detail can quote the DSN.
func scrubReport(r *checks.Report, s *dsn.Scrubber) {
	r.Target = s.String(r.Target)
	r.Info.Banner = s.String(r.Info.Banner)
	for i := range r.Results {
		res := &r.Results[i]
		res.Title = s.String(res.Title)
		res.Detail = s.String(res.Detail)
		res.Remedy = s.String(res.Remedy)
	}
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
