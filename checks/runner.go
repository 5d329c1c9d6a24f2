package checks

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/elide"
)

// DefaultCheckTimeout bounds one check when Config.CheckTimeout is zero;
// destructive checks get twice as long.
const DefaultCheckTimeout = time.Minute

// maxGrace caps how long a check whose time is up may take to notice its
// cancelled context and return (as long again as its bound, at most
// this); one that has not returned by then is reported as timed out and
// left running, and the run goes on.
const maxGrace = 5 * time.Second

// cleanupTimeout bounds the cleanup after each check and after the run; it
// runs even when the run's context was cancelled.
const cleanupTimeout = 30 * time.Second

// Run runs the suite of cfg in order and returns the report. Check failures
// are results, not errors: the error is for setup failures (no database, no
// strategy possible, an unknown ID in Only) and, with the partial report,
// for a context cancelled before every check ran. Whatever the run created
// (tables, held leases) is undone before Run returns.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	start := time.Now()
	r, err := NewRunner(cfg)
	if err != nil {
		return nil, err
	}
	rep := &Report{Info: cfg.Backend.Detected(), Results: []Result{}, StartedAt: start}
	progress := func(res Result, started bool) {
		if cfg.Progress != nil {
			cfg.Progress(res, started)
		}
	}
	total := func(n int) {
		if cfg.Total != nil {
			cfg.Total(n)
		}
	}
	total(len(r.checks))
	for _, c := range r.Checks() {
		if ctx.Err() != nil {
			break
		}
		progress(Result{ID: c.ID, Title: c.Title, Strategy: string(c.Strategy)}, true)
		res := r.RunCheck(ctx, c)
		rep.add(res)
		progress(res, false)
	}
	cleanup := r.Cleanup(ctx)
	if len(cleanup) > 0 {
		total(len(rep.Results) + len(cleanup))
	}
	for _, res := range cleanup {
		progress(Result{ID: res.ID, Title: res.Title, Strategy: res.Strategy}, true)
		rep.add(res)
		progress(res, false)
	}
	rep.Elapsed = time.Since(start)
	if err := ctx.Err(); err != nil {
		return rep, fmt.Errorf("selfcheck interrupted: %w", err)
	}
	return rep, nil
}

func (rep *Report) add(res Result) {
	rep.Results = append(rep.Results, res)
	switch res.Status {
	case StatusPass:
		rep.Passed++
	case StatusFail:
		rep.Failed++
	case StatusSkip:
		rep.Skipped++
	case StatusWarn:
		rep.Warned++
	}
}

// Runner runs the checks of one configuration one at a time and cleans up
// after them. Run uses it; dialecttest uses it to run each check as a
// subtest. A Runner is not safe for concurrent use.
type Runner struct {
	cfg    Config
	checks []Check
	state  *runState
}

// NewRunner validates cfg, fills in its defaults (Prefix, Tables,
// Strategies) and selects the checks (Suite, filtered by Only). An
// explicitly requested strategy the database cannot do is an error; with no
// Strategies, the unsupported ones are left out.
func NewRunner(cfg Config) (*Runner, error) {
	if cfg.Backend == nil {
		return nil, dialects.Invalidf("selfcheck needs an opened database")
	}
	if err := dialects.CheckNamespace(cfg.Namespace); err != nil {
		return nil, err
	}
	if err := CheckAllowRisks(cfg.AllowRisks); err != nil {
		return nil, err
	}
	cfg = withDefaults(cfg)
	strategies, err := resolveStrategies(cfg)
	if err != nil {
		return nil, err
	}
	claims := len(cfg.Strategies) == 0 && !cfg.NoClaims // a run narrowed to lock strategies leaves claims out
	cfg.Strategies = strategies
	all := Suite(cfg)
	if !claims {
		all = slices.DeleteFunc(all, isClaimCheck)
	}
	selected, err := selectChecks(all, cfg.Only)
	if err != nil {
		return nil, err
	}
	return &Runner{cfg: cfg, checks: selected, state: newRunState(cfg)}, nil
}

// Config is the configuration with its defaults filled in.
func (r *Runner) Config() Config { return r.cfg }

// Checks lists the selected checks in run order.
func (r *Runner) Checks() []Check { return slices.Clone(r.checks) }

// RunCheck runs one check with a fresh Env, bounded by its timeout
// (Timeout), releases what it left held, and returns its result. A check
// still running a grace period after its timeout (as long again, at most
// maxGrace) is failed as timed out and left running: RunCheck returns
// without it. A panic in the check is a failed result; a check that ends
// in an error once ctx is cancelled is skipped as interrupted.
func (r *Runner) RunCheck(ctx context.Context, c Check) (res Result) {
	res = Result{ID: c.ID, Title: c.Title, Strategy: string(c.Strategy)}
	start := time.Now()
	env := r.state.env()
	timeout := r.Timeout(c)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	detail, err := runBounded(cctx, c, env, min(timeout, maxGrace))
	if cctx.Err() != nil && err != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("check timed out after %s: %w", timeout, err)
	}
	cleanCtx, cancelClean := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancelClean()
	if cerr := env.finish(cleanCtx); cerr != nil {
		err = errors.Join(err, fmt.Errorf("cleanup: %w", cerr))
	}
	res.Status, res.Detail, res.Remedy = classify(c, detail, err)
	if err != nil && ctx.Err() != nil {
		// The run was cancelled under the check: it proved nothing either way.
		res.Status, res.Remedy = StatusSkip, ""
		res.Detail = "interrupted before it finished"
	}
	res.Duration = time.Since(start)
	return res
}

// Timeout is the bound of check c: Config.CheckTimeout, or
// DefaultCheckTimeout when that is zero, twice that for a destructive
// check.
func (r *Runner) Timeout(c Check) time.Duration {
	timeout := r.cfg.CheckTimeout
	if timeout <= 0 {
		timeout = DefaultCheckTimeout
	}
	if c.Destructive {
		timeout *= 2
	}
	return timeout
}

// errAbandoned is the error of a check that did not return within its
// grace period after its context ended.
var errAbandoned = errors.New("it did not stop when told to, and was left running")

// runBounded runs c and returns its outcome, or, when c has not returned
// grace after ctx ended, an error matching errAbandoned (ctx's own error
// joined) while c goes on in the background.
func runBounded(ctx context.Context, c Check, env *Env, grace time.Duration) (string, error) {
	type outcome struct {
		detail string
		err    error
	}
	done := make(chan outcome, 1)
	go func() {
		detail, err := runGuarded(ctx, c, env)
		done <- outcome{detail, err}
	}()
	select {
	case out := <-done:
		return out.detail, out.err
	case <-ctx.Done():
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case out := <-done:
		return out.detail, out.err
	case <-t.C:
		return "", fmt.Errorf("%w (%w)", errAbandoned, ctx.Err())
	}
}

func runGuarded(ctx context.Context, c Check, env *Env) (detail string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("check panicked: %v", p)
		}
	}()
	return c.Run(ctx, env)
}

// Cleanup drops the tables this run created and returns one result per
// table the run used: pass when dropped, warn when the table had to be left
// behind (the locker cannot drop tables, or the drop failed), pass with a
// note for tables the run did not create (they existed, or a store's key
// prefix needs no creating), which are kept.
func (r *Runner) Cleanup(ctx context.Context) []Result {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	rs := r.state
	rs.mu.Lock()
	defer rs.mu.Unlock()
	results := []Result{}
	for _, t := range rs.tableOrder {
		ts := rs.tables[t]
		if !ts.ready {
			continue
		}
		results = append(results, cleanTable(ctx, labelOf(r.cfg, t), ts))
	}
	return results
}

func cleanTable(ctx context.Context, label string, ts *tableState) Result {
	table := ts.locker.Schema().Table
	res := Result{ID: label + ".cleanup", Title: "leave no lock table behind", Strategy: string(dialects.StrategyTable)}
	start := time.Now()
	defer func() { res.Duration = time.Since(start) }()
	if !ts.created {
		res.Status = StatusPass
		res.Detail = fmt.Sprintf("table %s was kept: this run did not create it (it existed before, or, as a store's key prefix, needs no creating); the run's locks in it are released", table)
		return res
	}
	dropper, ok := ts.locker.(dialects.TableDropper)
	if !ok {
		res.Status = StatusWarn
		res.Detail = fmt.Sprintf("table %s was created by this run and left behind: this locker cannot drop tables", table)
		res.Remedy = "drop the table " + table + " by hand"
		return res
	}
	if err := dropper.DropTable(ctx); err != nil {
		res.Status = StatusWarn
		res.Detail = fmt.Sprintf("table %s was created by this run and left behind: %v", table, err)
		res.Remedy = "drop the table " + table + " by hand"
		return res
	}
	ts.ready, ts.created = false, false
	res.Status = StatusPass
	res.Detail = "dropped table " + table + ", created by this run"
	return res
}

// NewPrefix returns a fresh run prefix, "schedlock_selfcheck_" and 8 random
// hex digits: usable in lock names and as a table name.
func NewPrefix() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "schedlock_selfcheck_" + hex.EncodeToString(b[:])
}

// PresetTables returns one table per preset, each named after prefix and
// the preset (e.g. "<prefix>_shedlock"), so a run can check every layout
// without touching existing tables.
func PresetTables(prefix string) []dialects.Table {
	var out []dialects.Table
	for _, p := range dialects.Presets() {
		out = append(out, dialects.Table{Preset: p, Name: tableName(prefix, "_"+p)})
	}
	return out
}

// tableName turns prefix+suffix into a plain lower-case identifier of at
// most 63 characters, keeping the suffix.
func tableName(prefix, suffix string) string {
	var b strings.Builder
	for i, r := range strings.ToLower(prefix) {
		switch {
		case r >= 'a' && r <= 'z', r == '_', r >= '0' && r <= '9' && i > 0:
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := b.String()
	if name == "" {
		name = "schedlock_selfcheck"
	}
	if max := 63 - len(suffix); len(name) > max {
		name = name[:max]
	}
	return name + suffix
}

func withDefaults(cfg Config) Config {
	if cfg.Prefix == "" {
		cfg.Prefix = NewPrefix()
	}
	if len(cfg.Tables) == 0 {
		cfg.Tables = []dialects.Table{{Preset: dialects.PresetSchedlock, Name: tableName(cfg.Prefix, "")}}
	}
	return cfg
}

// resolveStrategies returns the strategies to check: the requested ones,
// each proven constructible, or every one the database supports.
func resolveStrategies(cfg Config) ([]dialects.Strategy, error) {
	seen := map[string]bool{}
	for _, t := range cfg.Tables {
		s, err := t.Schema()
		if err != nil {
			return nil, fmt.Errorf("selfcheck table: %w", err)
		}
		if seen[strings.ToLower(s.Table)] {
			return nil, dialects.Invalidf("table %s is listed twice", s.Table)
		}
		seen[strings.ToLower(s.Table)] = true
	}
	if len(cfg.Strategies) > 0 {
		var out []dialects.Strategy
		for _, s := range cfg.Strategies {
			if slices.Contains(out, s) {
				continue
			}
			if err := strategyUsable(cfg, s); err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	var out []dialects.Strategy
	for _, s := range dialects.Strategies {
		if strategyUsable(cfg, s) == nil {
			out = append(out, s)
		}
	}
	// None possible: the suite's "strategy" check reports why, beside
	// the probes, instead of a run with no report.
	return out, nil
}

// noStrategyError says why no strategy is possible on cfg's backend, or
// nil when one is.
func noStrategyError(cfg Config) error {
	var reasons []error
	for _, s := range dialects.Strategies {
		err := strategyUsable(cfg, s)
		if err == nil {
			return nil
		}
		reasons = append(reasons, err)
	}
	// One line, the reasons after "; ", each still in the chain.
	args := []any{cfg.Backend.Detected().Product}
	for _, r := range reasons {
		args = append(args, r)
	}
	return fmt.Errorf("no lock strategy is possible on %s: "+strings.Repeat("%w; ", len(reasons)-1)+"%w", args...)
}

func strategyUsable(cfg Config, s dialects.Strategy) error {
	switch s {
	case dialects.StrategySession:
		_, err := cfg.Backend.Locker(dialects.StrategySession, dialects.Table{})
		return err
	case dialects.StrategyTable:
		for _, t := range cfg.Tables {
			if _, err := tableLocker(cfg.Backend, t); err != nil {
				return err
			}
		}
		return nil
	default:
		return dialects.Invalidf("unknown strategy %q: use session or table", s)
	}
}

func selectChecks(all []Check, only []string) ([]Check, error) {
	if len(only) == 0 {
		return all, nil
	}
	ids := make([]string, 0, len(all))
	for _, c := range all {
		ids = append(ids, c.ID)
	}
	for _, id := range only {
		if !slices.Contains(ids, id) {
			return nil, dialects.Invalidf("unknown check %q: the checks for this database are %s", id, elide.Whole(strings.Join(ids, ", ")))
		}
	}
	var out []Check
	for _, c := range all {
		if slices.Contains(only, c.ID) {
			out = append(out, c)
		}
	}
	return out, nil
}

// randomRune draws a CJK ideograph (U+4E00…U+9FFF).
func randomRune() rune {
	n, err := rand.Int(rand.Reader, big.NewInt(0x9FFF-0x4E00))
	if err != nil {
		return 0x4E00
	}
	return rune(0x4E00 + n.Int64())
}
