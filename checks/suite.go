package checks

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/schedlock/schedlock/dialects"
)

// target is what a strategy check runs against: the session strategy, or
// the table strategy on one table.
type target struct {
	strategy dialects.Strategy
	table    dialects.Table // table strategy only
	// label starts the IDs of the target's checks: "session", "table", or
	// "table.<preset>" when a run covers several tables.
	label string
}

func (tg target) isTable() bool { return tg.strategy == dialects.StrategyTable }

// locker returns the run's locker for tg.
func (tg target) locker(ctx context.Context, env *Env) (dialects.Locker, error) {
	return env.Locker(ctx, tg.strategy, tg.table)
}

// lockers returns n lockers for n holders that must exclude each other
// through the database: for the session strategy the run's locker and
// n-1 new ones, each with connections of its own, as separate processes
// would have (one session locker keeps one holder per name inside the
// process, which would prove nothing about the database); for the table
// strategy the run's locker n times. The new lockers are closed when the
// check ends.
func (tg target) lockers(ctx context.Context, env *Env, n int) ([]dialects.Locker, error) {
	l, err := tg.locker(ctx, env)
	if err != nil {
		return nil, err
	}
	out := []dialects.Locker{l}
	for len(out) < n {
		if tg.isTable() {
			out = append(out, l)
			continue
		}
		other, err := env.Backend.Locker(dialects.StrategySession, dialects.Table{})
		if err != nil {
			return nil, err
		}
		if c, ok := other.(io.Closer); ok {
			env.Defer(func(context.Context) error { return c.Close() })
		}
		out = append(out, other)
	}
	return out, nil
}

// tableLocker returns the run's table locker for tg.
func (tg target) tableLocker(ctx context.Context, env *Env) (dialects.LeaseLocker, error) {
	return env.TableLocker(ctx, tg.table)
}

// check builds the Check with ID "<label>.<id>".
func (tg target) check(id, title string, run func(ctx context.Context, env *Env, tg target) (string, error)) Check {
	return Check{
		ID:       tg.label + "." + id,
		Title:    title,
		Strategy: tg.strategy,
		Run:      func(ctx context.Context, env *Env) (string, error) { return run(ctx, env, tg) },
	}
}

// Suite returns the ordered checks for cfg: the detection probe, then for
// each strategy (session first, then each table) its read-and-write checks,
// then the destructive checks of every strategy. With no Strategies it
// includes every strategy the database supports; with no Tables, the
// default native table named after Prefix.
//
// Check IDs: "detect", then "<label>.<check>" where label is "session",
// "table", or "table.<preset>" (numbered "-1", "-2"… when a preset repeats)
// when several tables are checked.
func Suite(cfg Config) []Check {
	cfg = withDefaults(cfg)
	strategies := cfg.Strategies
	if len(strategies) == 0 && cfg.Backend != nil {
		for _, s := range dialects.Strategies {
			if strategyUsable(cfg, s) == nil {
				strategies = append(strategies, s)
			}
		}
	}
	var targets []target
	for _, s := range dialects.Strategies {
		if !slices.Contains(strategies, s) {
			continue
		}
		if s == dialects.StrategySession {
			targets = append(targets, target{strategy: s, label: "session"})
			continue
		}
		for _, t := range cfg.Tables {
			targets = append(targets, target{strategy: s, table: t, label: labelOf(cfg, t)})
		}
	}

	out := append([]Check{detectCheck()}, capabilityChecks()...)
	if len(targets) == 0 && cfg.Backend != nil {
		if err := noStrategyError(cfg); err != nil {
			out = append(out, strategyCheck(err))
		}
	}
	for _, tg := range targets {
		out = append(out, strategyChecks(tg)...)
	}
	out = append(out, claimChecks(cfg)...)
	for _, tg := range targets {
		for _, c := range destructiveChecks(tg) {
			c.Destructive = true
			out = append(out, c)
		}
	}
	return out
}

// labelOf names the target of table t among cfg.Tables.
func labelOf(cfg Config, t dialects.Table) string {
	if len(cfg.Tables) <= 1 {
		return "table"
	}
	presetOf := func(t dialects.Table) string {
		if t.Preset == "" {
			return dialects.PresetSchedlock
		}
		return t.Preset
	}
	preset := presetOf(t)
	total, index := 0, 0
	for _, other := range cfg.Tables {
		if presetOf(other) != preset {
			continue
		}
		total++
		if other == t {
			index = total
		}
	}
	if total > 1 {
		return fmt.Sprintf("table.%s-%d", preset, index)
	}
	return "table." + preset
}

// strategyChecks are the non-destructive checks of one target, in order.
func strategyChecks(tg target) []Check {
	var cs []Check
	add := func(c Check) { cs = append(cs, c) }
	if tg.isTable() {
		add(tg.check("clock", "database clock advances and is close to the host clock", checkClock))
	}
	add(tg.check("acquire", "acquire and release a lock", checkAcquire))
	add(tg.check("contend", "a held lock is refused to a second acquirer", checkContend))
	add(tg.check("wait", "acquire waits no longer than asked and gets a freed lock", checkWait))
	if tg.isTable() {
		add(tg.check("owner", "release and refresh by another owner are refused and change nothing", checkWrongOwner))
	} else {
		add(tg.check("pool-trap", "an unlock on another pooled connection frees nothing", checkPoolTrap))
		add(tg.check("many", "many locks on shared connections, released in any order, each release frees only its own", checkManyLocks))
		add(tg.check("handover", "a waiter gets a released lock at once, not at its next poll", checkHandover))
	}
	add(tg.check("refresh", "refresh extends a held lease", checkRefresh))
	add(tg.check("refresh-lost", "refresh after the lease ended is refused as lost", checkRefreshLost))
	add(tg.check("release-twice", "a second release reports the lease as lost", checkReleaseTwice))
	if tg.isTable() {
		add(tg.check("at-most", "an expired lease is taken over and its holder told", checkAtMost))
		add(tg.check("at-least", "an early release keeps the lock until at-least has passed", checkAtLeast))
		add(tg.check("time-precision", "the lease times are stored with fractions of a second", checkTimePrecision))
	}
	add(tg.check("token", "the fencing token grows on every acquire", checkToken))
	add(tg.check("names.special", "names with quotes, wildcards, backslashes, spaces and UTF-8 are exact", checkSpecialNames))
	add(tg.check("names.distinct", "names that differ only in escaping are different locks", checkDistinctNames))
	add(tg.check("names.case", "names that differ only in case are different locks; the name column's collation", checkNameCase))
	add(tg.check("names.length", "one-character and long names are exact", checkNameLengths))
	add(tg.check("invalid", "empty names and negative durations are refused", checkInvalid))
	add(tg.check("names.invalid", "names and owners with a NUL byte, invalid UTF-8 or only white space are refused", checkBadNamesAndOwners))
	return cs
}

// destructiveChecks run after every other check of every target.
func destructiveChecks(tg target) []Check {
	var cs []Check
	if !tg.isTable() {
		cs = append(cs, tg.check("kill", "killing the holder's session frees the lock and tells the holder", checkKill))
		cs = append(cs, tg.check("shared-loss", "killing a shared lock connection tells every lease on it", checkSharedLoss))
	}
	cs = append(cs,
		tg.check("contention", "8 workers on 2 names never overlap (400 + 400 critical sections)", checkContention),
		tg.check("race10", "10 simultaneous acquirers: exactly one wins, 50 rounds", checkRace10),
	)
	return cs
}
