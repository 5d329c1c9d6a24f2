// Package checks is the selfcheck suite: an ordered list of checks that
// prove a database's lock behaviour through the dialects interfaces, so one
// check runs unchanged on every database. Read-only probes come first,
// destructive ones last. It never imports testing: `schedlock selfcheck`
// runs it at run time, and dialects/dialecttest runs the same checks as
// subtests against live servers.
package checks

import (
	"context"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// Status is the outcome of one check.
type Status string

const (
	StatusPass Status = "pass"
	StatusFail Status = "fail"
	StatusSkip Status = "skip"
	StatusWarn Status = "warn"
)

// Result is one check's outcome.
type Result struct {
	ID       string        `json:"id"`
	Title    string        `json:"title"`
	Strategy string        `json:"strategy,omitempty"`
	Status   Status        `json:"status"`
	Duration time.Duration `json:"duration_ns"`
	Detail   string        `json:"detail"`
	// Remedy says what to do when the check failed or warned: the GRANT,
	// the setting, the strategy to use instead.
	Remedy string `json:"remedy,omitempty"`
}

// Report is a whole selfcheck run.
type Report struct {
	Target  string        `json:"target"` // redacted DSN or file path
	Info    dialects.Info `json:"database"`
	Results []Result      `json:"checks"`
	Passed  int           `json:"passed"`
	Failed  int           `json:"failed"`
	Skipped int           `json:"skipped"`
	Warned  int           `json:"warned"`
	Elapsed time.Duration `json:"elapsed_ns"`
	// StartedAt is when the run began (the local clock). Reports render
	// it in their own format: output writes it as started_at.
	StartedAt time.Time `json:"-"`
}

// Config selects what a run covers.
type Config struct {
	// Backend is the opened database to check.
	Backend dialects.Backend
	// Strategies to check; empty means every strategy the database
	// supports. A listed strategy the database cannot do makes Run fail
	// with an error matching dialects.ErrUnsupported.
	Strategies []dialects.Strategy
	// Tables to check the table strategy on; empty means one temporary
	// native table named after Prefix. Tables given here are used as they
	// are (created only if missing, dropped only if the run created them).
	Tables []dialects.Table
	// Prefix makes every lock and table name of this run unique; empty
	// means a generated "schedlock_selfcheck_<random>".
	Prefix string
	// Namespace, when set, is the namespace of the run's lock names
	// (dialects.NamespacedName): a check on a shared database then stays
	// inside it, as the jobs of that environment do.
	Namespace string
	// AllowRisks are the IDs of risks that can hand a lock to two holders
	// (dialects.TwoHolderRiskIDs) that this run accepts: the
	// probe.two-holders check warns of them instead of failing. An ID
	// not among those makes Run fail with an error matching
	// dialects.ErrInvalid.
	AllowRisks []string
	// Only, when non-empty, runs just the checks whose ID is listed; an ID
	// the suite of this database does not have makes Run fail with an error
	// matching dialects.ErrInvalid.
	Only []string
	// NoClaims leaves out the claim.* checks of task-row claims, which a
	// run also leaves out when it names Strategies (claims are not a lock
	// strategy). dialecttest, the lock conformance suite, sets it.
	NoClaims bool
	// CheckTimeout bounds each check: its context ends then, and a check
	// still running a grace period later (as long again, at most 5 s) is
	// failed as timed out and left behind, so the run goes on. Zero means
	// DefaultCheckTimeout; destructive checks get twice as long.
	CheckTimeout time.Duration
	// Progress, when set, is called before each check starts (id, title)
	// and after it ends (with its Result).
	Progress func(r Result, started bool)
	// Total, when set, is told how many results the run will report: once
	// before the first check, and again before the cleanup's results when
	// they make it more. Progress displays show "[N/total]" with it.
	Total func(n int)
}

// Check is one entry of the suite.
type Check struct {
	ID    string
	Title string
	// Strategy is the strategy the check exercises, or "" for probes.
	Strategy dialects.Strategy
	// Destructive checks (kill a session, long contention) run last.
	Destructive bool
	// Optional checks prove something the lock contract does not depend on;
	// a missing privilege skips them (with the grant as remedy) instead of
	// failing them.
	Optional bool
	// Run does the check. It returns a detail line; an error fails the
	// check; an error matching ErrSkip skips it and one matching ErrWarn
	// warns. The Remedy of a failure comes from a *Remedied error.
	Run func(ctx context.Context, env *Env) (detail string, err error)
}
