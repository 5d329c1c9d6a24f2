// Package dialecttest is the conformance suite of the lock contract
// (the dialects package doc, "The lock contract") for every dialect's
// tests: it runs
// the selfcheck suite of package checks against a live database, each check
// as a subtest, so the checks `schedlock selfcheck` runs are the ones every
// dialect is tested with.
//
// A backend's test opens it and calls Run with the Backend (any
// implementation: a SQL database through dialects.Open, or a backend that
// is not database/sql):
//
//	db, err := postgres.New(ctx, sqlDB, nil)
//	if err != nil { t.Fatal(err) }
//	dialecttest.Run(t, db, dialecttest.Options{})
//
// The checks reach the backend only through the kit's interfaces: the
// Backend's lockers, dialects.TableLocker for the table strategy,
// dialects.Prober for the probe checks (without one they warn that
// nothing could be told), the backend's LockAdmin for the kill check
// and sqlkit.SQLSessionLocker for the pooled-connection trap (each
// skipped without).
package dialecttest

import (
	"testing"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
)

// Options select what Run covers.
type Options struct {
	// Strategies to prove; empty means every strategy the database
	// supports (a strategy it does not support is not listed, not skipped).
	Strategies []dialects.Strategy
	// Tables for the table strategy; empty means one table per preset
	// (schedlock, shedlock, sys_sched_lock), each under a table name unique
	// to the run, created and dropped by it.
	Tables []dialects.Table
	// AllowRisks are the risks of two holders the test's server is known
	// to have (checks.Config.AllowRisks; e.g. dialects.RiskNoPersistence
	// for a throwaway Redis): the probe.two-holders check warns of them
	// instead of failing, and fails on any other.
	AllowRisks []string
}

// Run runs every check of the suite against db as a subtest named by the
// check's ID ("session.contend", "table.shedlock.at-most", …), then one
// "<label>.cleanup" subtest per table the run used. A failed check is a
// t.Errorf with its detail and remedy; a warning is logged; a check that
// does not apply to the database (checks.ErrSkip) is a t.Skip. A skip that
// carries a remedy (an optional check that lacked a privilege) is a missing
// prerequisite, not "not applicable", and fails. Setup errors (no strategy
// possible, a bad table) are fatal.
func Run(t *testing.T, db dialects.Backend, opts Options) {
	t.Helper()
	prefix := checks.NewPrefix()
	tables := opts.Tables
	if len(tables) == 0 {
		tables = checks.PresetTables(prefix)
	}
	r, err := checks.NewRunner(checks.Config{Backend: db, Strategies: opts.Strategies, Tables: tables, Prefix: prefix, NoClaims: true, AllowRisks: opts.AllowRisks})
	if err != nil {
		t.Fatalf("dialecttest: %v", err)
	}
	ctx := t.Context()
	defer func() {
		for _, res := range r.Cleanup(ctx) {
			t.Run(res.ID, func(t *testing.T) { report(t, res) })
		}
	}()
	for _, c := range r.Checks() {
		t.Run(c.ID, func(t *testing.T) { report(t, r.RunCheck(ctx, c)) })
	}
}

// report turns one result into the subtest's outcome.
func report(t *testing.T, res checks.Result) {
	t.Helper()
	switch res.Status {
	case checks.StatusPass:
		t.Logf("%s (%s)", res.Detail, res.Duration)
	case checks.StatusWarn:
		t.Logf("warning: %s: %s%s", res.Title, res.Detail, remedy(res))
	case checks.StatusSkip:
		if res.Remedy != "" {
			t.Errorf("%s: skipped for a missing prerequisite: %s%s", res.Title, res.Detail, remedy(res))
			return
		}
		t.Skip(res.Detail)
	default:
		t.Errorf("%s: %s%s", res.Title, res.Detail, remedy(res))
	}
}

func remedy(res checks.Result) string {
	if res.Remedy == "" {
		return ""
	}
	return "\nremedy: " + res.Remedy
}

// Results runs only the checks with the given IDs ("table.names.case",
// "session.names.case", …) against db on opts' strategies and tables (as
// Run takes them), and returns their results by ID, for tests that assert
// what a check finds (a failure included). Tables that exist are used as
// they are and left in place.
func Results(t *testing.T, db dialects.Backend, opts Options, ids ...string) map[string]checks.Result {
	t.Helper()
	r, err := checks.NewRunner(checks.Config{
		Backend: db, Strategies: opts.Strategies, Tables: opts.Tables,
		Prefix: checks.NewPrefix(), Only: ids, NoClaims: true,
	})
	if err != nil {
		t.Fatalf("dialecttest: %v", err)
	}
	ctx := t.Context()
	out := map[string]checks.Result{}
	for _, c := range r.Checks() {
		out[c.ID] = r.RunCheck(ctx, c)
	}
	for _, res := range r.Cleanup(ctx) {
		if res.Status == checks.StatusFail {
			t.Errorf("%s: %s", res.ID, res.Detail)
		}
	}
	return out
}
