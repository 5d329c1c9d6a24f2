package dialects

import (
	"context"
	"strings"
	"time"
)

// Run history: `schedlock run` records every run it started in a run
// table, one row per run keyed by the lock name and a token. With the
// native lock table (preset schedlock) the run table is RunsTable(lock
// table) ("schedlock_runs") and the token is the run's fencing token.
// Beside a table of another preset (shedlock, sys_sched_lock), and for
// runs under the session strategy, runs go to schedlock's own run table,
// OwnRunsTable ("schedlock_runs" in the lock table's schema), and the
// token is the next one of the name in that table. Times are the
// database's clock: the end is its now when the row is written, the start
// that now minus the duration the host measured. The table is never
// created implicitly; a missing one is a *MissingTableError.

// RunsSuffix is appended to the lock table's name to name its run table.
const RunsSuffix = "_runs"

// DefaultKeepRuns is how many runs per lock name a run table keeps when
// the caller does not say.
const DefaultKeepRuns = 100

// RunsTable is the name of the run table of lock table table:
// "schedlock" → "schedlock_runs", "jobs.locks" → "jobs.locks_runs".
func RunsTable(table string) string { return table + RunsSuffix }

// OwnRunsTable is schedlock's own run table in the schema of lock table
// table, where runs under a lock table of another preset are recorded:
// "shedlock" → "schedlock_runs", "jobs.sys_sched_lock" →
// "jobs.schedlock_runs".
func OwnRunsTable(table string) string {
	prefix := ""
	if i := strings.LastIndexByte(table, '.'); i >= 0 {
		prefix = table[:i+1]
	}
	return RunsTable(prefix + presets[PresetSchedlock].Table)
}

// Run is one recorded run of a job under its lock.
type Run struct {
	// Name is the lock name as stored (namespaced, fitted to the column).
	Name string
	// Token is the fencing token of the run's lease. A run without one
	// (a ShedLock or sys_sched_lock row, a session lock) is recorded with
	// Token 0: the run table gives it the next token of its name.
	Token int64
	// Host is the host the run was started on.
	Host string
	// Owner is the lease's owner.
	Owner string
	// StartedAt and EndedAt are UTC on the database clock.
	StartedAt time.Time
	EndedAt   time.Time
	// Duration is the run's length as the host measured it (milliseconds).
	Duration time.Duration
	// AtMost is the lease length the run held the lock with.
	AtMost time.Duration
	// ExitCode is what the run exited with (CodeLeaseLost-style codes
	// included: the code the runner reported).
	ExitCode int
	// Schedule is the job's schedule as the run was given it (run
	// --schedule, see ParseSchedule); empty when none.
	Schedule string
}

// Share is the part of its at-most the run used: 0.5 is half.
func (r Run) Share() float64 {
	if r.AtMost <= 0 {
		return 0
	}
	return float64(r.Duration) / float64(r.AtMost)
}

// RunShareWarning is the share of at-most past which a run is too close
// to its lease. The sizing rule comes from the design articles on
// multi-database job scheduling, not from ShedLock: the lock timeout
// should be at least the queue wait plus the run time plus 30%, and 1/1.3
// is about 0.77; 0.7 leaves room for the wait.
const RunShareWarning = 0.7

// RunHistory reads and writes the run table of one lock table.
type RunHistory interface {
	// Table is the run table's name.
	Table() string
	// CreateSQL is the statement that creates the run table.
	CreateSQL() string
	// CreateTable creates the run table when it does not exist.
	CreateTable(ctx context.Context) error
	// Record writes run (StartedAt and EndedAt are ignored: the database
	// clock sets them) and keeps only the newest keep runs of its name
	// (keep <= 0: DefaultKeepRuns). Rows of the name with a token at or
	// above run.Token are from before the lock row was recreated and are
	// removed first. A run with Token 0 gets the next token of its name
	// (one above the highest recorded) and removes nothing.
	Record(ctx context.Context, run Run, keep int) error
	// Runs lists the newest runs of name (a lock name as the caller gives
	// it; it is stored as the lock table stores it), newest first, at most
	// limit (limit <= 0: DefaultKeepRuns).
	Runs(ctx context.Context, name string, limit int) ([]Run, error)
	// LastRuns returns the newest run of every name, by stored name.
	LastRuns(ctx context.Context) (map[string]Run, error)
	// LastSuccesses returns the newest run of every name that exited 0,
	// by stored name.
	LastSuccesses(ctx context.Context) (map[string]Run, error)
	// StoredName is name as the run and lock tables store it.
	StoredName(name string) string
}

// RunHistorian is implemented by table lockers that have a run table:
// a lock table on a SQL database whose dialect writes its SQL (the native
// preset its own, the others OwnRunsTable). Other backends give an error
// matching ErrUnsupported.
type RunHistorian interface {
	RunHistory() (RunHistory, error)
}

// NoScheduleColumnError says a run was recorded without its schedule: the
// run table was created before it had a column for one. CreateTable adds
// it; AddSQL is the statement that does.
type NoScheduleColumnError struct {
	Table  string
	AddSQL string
}

func (e *NoScheduleColumnError) Error() string {
	return "run table " + e.Table + " has no schedule column, so the run was recorded without its schedule: add it with " + e.AddSQL
}
