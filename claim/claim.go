// Package claim is schedlock's task-row claiming for programs: workers on
// many nodes take due rows of a task table, each row exactly once, under a
// claim lease that gives a dead worker's rows back.
//
//	import _ "github.com/schedlock/schedlock/dialects/postgres" // the backend of the DSN, as for package lock
//
//	q, err := claim.Open(ctx, "postgres://app@db1/jobs", claim.Options{})
//	if err != nil { … }
//	defer q.Close()
//	tasks, err := q.Claim(ctx, claim.Request{Owner: claim.NewOwner(), Max: 10})
//	for i := range tasks {
//		if err := run(tasks[i]); err != nil {
//			_ = q.Fail(ctx, &tasks[i]) // retried after a back-off, then failed
//			continue
//		}
//		_ = q.Complete(ctx, &tasks[i])
//	}
//
// Or finish the whole batch in one statement, each row still checked on
// its own:
//
//	results := make([]claim.Result, len(tasks))
//	for i := range tasks {
//		results[i] = claim.Result{Task: &tasks[i], Outcome: claim.Completed}
//		if err := run(tasks[i]); err != nil {
//			results[i].Outcome = claim.Failed
//		}
//	}
//	lost, err := q.Finish(ctx, results...) // lost: the tasks another worker took over
//
// How a row is claimed depends on what the database proves when Open
// probes it: skip-locked (SELECT … FOR UPDATE SKIP LOCKED: PostgreSQL,
// MySQL 8, MariaDB 10.6+, Oracle), readpast (SQL Server's UPDLOCK,
// READPAST), or optimistic (a version-checked UPDATE: SQLite, TiDB,
// CockroachDB, MySQL 5.7); Options.Strategy overrides it. The default
// table (schedlock_tasks) is created only by CreateTable; a table of your
// own is used through Options.Columns. docs/claims.md has the details.
package claim

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/claimtable"
	"github.com/schedlock/schedlock/internal/dsn"
)

// Task is one claimed row, held by its Owner until Complete, Fail,
// GiveBack or the claim lease's end. Pass it by pointer to those calls:
// Extend moves its Version on. A field whose column the table lacks
// (Options.Columns) is zero.
type Task struct {
	// ID is the row's id column.
	ID int64
	// Type is the task type ("" for a table without a type column).
	Type string
	// Payload is the row's payload, as Add stored it.
	Payload []byte
	// Priority orders the claims: higher first, then the earliest due.
	Priority int64
	// Due is when the row became due, in UTC.
	Due time.Time
	// Retries is the failures the row had before this claim.
	Retries int
	// MaxRetries is the failures the row allows (Options.MaxRetries for a
	// table without a max_retries column): Fail past it fails the row for
	// good.
	MaxRetries int
	// Owner is the Request.Owner that claimed the row.
	Owner string
	// Version is the row version this claim holds; Complete, Fail,
	// GiveBack and Extend match it, so a worker whose claim ran out and was
	// taken over changes nothing (ErrNotClaimed).
	Version int64
	// ClaimedUntil is the claim lease's end as the database computed it
	// (read before the row was written, so never later than stored); after
	// it another worker may claim the row.
	ClaimedUntil time.Time
}

// NewTask is a row for Add.
type NewTask struct {
	// Type is the task type (ignored by a table without a type column).
	Type string
	// Payload is stored as given (nil: none).
	Payload []byte
	// Priority orders the claims: higher first (default 0).
	Priority int64
	// Delay puts the due time after the database's now (0: due at once).
	Delay time.Duration
	// MaxRetries is the failures the row allows (0: Options.MaxRetries; a
	// negative value allows none and is stored as 0).
	MaxRetries int
}

// Request is one Claim.
type Request struct {
	// Owner identifies the worker, and must be unique per worker: two
	// workers with one owner are one worker, each able to complete the
	// other's rows. NewOwner makes one. Like a lock name it is valid UTF-8
	// without a NUL byte and not only white space, and it has at most 255
	// bytes; an empty Owner is refused with ErrInvalid.
	Owner string
	// Max is how many rows to claim at most, 1 to MaxBatch.
	Max int
	// Type, when set, claims only rows of that task type.
	Type string
	// Lease is this claim's lease (0: Options.Lease).
	Lease time.Duration
}

// Types shared with the engine: values pass freely between the two.
type (
	// Columns maps the task table's roles to a table's own columns.
	Columns = claimtable.Columns
	// Statuses are the words the status column holds.
	Statuses = claimtable.Statuses
	// Strategy names how rows are claimed.
	Strategy = dialects.ClaimStrategy
)

// The claim strategies.
const (
	SkipLocked = dialects.ClaimSkipLocked
	ReadPast   = dialects.ClaimReadPast
	Optimistic = dialects.ClaimOptimistic
)

// Errors.
var (
	// ErrNotClaimed: Complete, Fail, GiveBack or Extend by a worker that no
	// longer holds the row (its lease ran out and another worker claimed
	// it, or it was released); the row is unchanged.
	ErrNotClaimed = claimtable.ErrNotClaimed
	// ErrInvalid: bad input (a batch of 0 or above MaxBatch, an empty
	// owner, a table without the mapped columns).
	ErrInvalid = dialects.ErrInvalid
	// ErrUnsupported: the database cannot claim this way (or has no rows).
	ErrUnsupported = dialects.ErrUnsupported
)

// MaxBatch is the most rows one Claim takes.
const MaxBatch = claimtable.MaxBatch

// Options tune Open. The zero value: the default table, the strategy the
// probe recommends, a 5-minute claim lease, 3 retries with a back-off that
// doubles from one second.
type Options struct {
	// Table is the task table (default schedlock_tasks), optionally
	// schema-qualified.
	Table string
	// Columns maps the roles to your table's columns; zero: the default
	// table's. An optional role (Type, Payload, Priority, MaxRetries,
	// UpdatedAt) left empty means the table has no such column, and no
	// statement names it. Open checks that the mapped columns exist.
	Columns Columns
	// Statuses are your table's status values (WAIT, RUNNING, …); a field
	// left empty keeps its default: ready, claimed, done, failed. They are
	// bound as parameters, never written into SQL; the four must differ,
	// also ignoring case.
	Statuses Statuses
	// Strategy overrides the probe's recommendation.
	Strategy Strategy
	// Lease is how long a claim lasts before the row may be claimed again.
	Lease time.Duration
	// ExpectedRun is how long a task is expected to run; a Lease shorter
	// than it shows up in Warnings.
	ExpectedRun time.Duration
	// MaxRetries is the failures allowed where the table has no
	// max_retries column, and Add's default.
	MaxRetries int
	// Backoff is the delay before a failed row is due again.
	Backoff func(failures int) time.Duration
}

// Queue is an opened database with the claimer of one task table. It is
// safe for concurrent use.
type Queue struct {
	cl      *claimtable.Claimer
	backend dialects.Backend
}

// Open parses dsnText (every form the schedlock command takes), connects,
// probes the database for the claim strategy (unless opts.Strategy names
// one) and checks that the table has the mapped columns — unless the
// table does not exist yet (CreateTable makes the default one). The
// password never appears in an error. The DSN's backend must be linked
// into the program, as for lock.Open (import _
// "github.com/schedlock/schedlock/dialects/postgres"; dialects/all links
// every one): a DSN of one that is not linked fails, matching
// ErrUnsupported, in one line naming the import to add. A SQLite file
// that does not exist is refused (the error matches fs.ErrNotExist)
// unless the DSN says x-create-file=true, as lock.Open does.
func Open(ctx context.Context, dsnText string, opts Options) (*Queue, error) {
	target, err := dsn.Parse(dsnText)
	if err != nil {
		var nl *dsn.NotLinkedError
		if errors.As(err, &nl) {
			return nil, fmt.Errorf("schedlock: %w", nl)
		}
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if err := target.MissingFile(); err != nil {
		return nil, fmt.Errorf("%w: check the path, or add x-create-file=true to the DSN to create it", err)
	}
	target.NameConnections(applicationName())
	backend, err := target.Connect(ctx)
	if err != nil {
		return nil, err
	}
	cl, err := claimtable.Open(ctx, backend, claimtable.Table{Name: opts.Table, Columns: opts.Columns, Statuses: opts.Statuses}, claimtable.Options{
		Strategy: opts.Strategy, Lease: opts.Lease, ExpectedRun: opts.ExpectedRun, MaxRetries: opts.MaxRetries, Backoff: opts.Backoff,
	})
	if err == nil {
		if err = cl.CheckColumns(ctx, claimtable.ReadColumns(backend)); errors.Is(err, dialects.ErrNoTable) {
			err = nil
		}
	}
	if err != nil {
		_ = backend.Close()
		return nil, target.Scrub(err)
	}
	return &Queue{cl: cl, backend: backend}, nil
}

// NewOwner returns a worker identity unique to this process and call:
// host, process id and random digits.
func NewOwner() string { return dialects.NewOwner() }

// Claim takes up to r.Max due rows for r.Owner, by priority then due
// time, each row exactly once across every worker, under the claim lease
// (r.Lease, else Options.Lease). Fewer rows, or none, is no error.
func (q *Queue) Claim(ctx context.Context, r Request) ([]Task, error) {
	claimed, err := q.cl.Claim(ctx, claimtable.Request(r))
	if claimed == nil {
		return nil, err
	}
	tasks := make([]Task, len(claimed))
	for i := range claimed {
		tasks[i] = Task(claimed[i])
	}
	return tasks, err
}

// Complete marks t done; ErrNotClaimed (row unchanged) when t's owner no
// longer holds it.
func (q *Queue) Complete(ctx context.Context, t *Task) error {
	return q.cl.Complete(ctx, (*claimtable.Task)(t))
}

// Fail counts a failure of t: ready again after the back-off while its
// retries last, then failed for good.
func (q *Queue) Fail(ctx context.Context, t *Task) error {
	return q.cl.Fail(ctx, (*claimtable.Task)(t))
}

// GiveBack returns t to the ready rows without counting a failure.
func (q *Queue) GiveBack(ctx context.Context, t *Task) error {
	return q.cl.GiveBack(ctx, (*claimtable.Task)(t))
}

// Outcome is what Finish makes of a task: Completed, Failed or GivenBack.
type Outcome = claimtable.Outcome

// The outcomes of Finish, each what the single call of its name does.
const (
	// Completed marks the row done, as Complete does.
	Completed = claimtable.Completed
	// Failed counts a failure, as Fail does: ready again after the
	// back-off while its retries last, then failed for good.
	Failed = claimtable.Failed
	// GivenBack returns the row to the ready rows without counting a
	// failure, as GiveBack does.
	GivenBack = claimtable.GivenBack
)

// Result is one task of a Finish and what becomes of it.
type Result struct {
	// Task is a task Claim returned, by pointer: Finish moves its Version
	// on.
	Task *Task
	// Outcome is what becomes of it: Completed, Failed or GivenBack.
	Outcome Outcome
}

// Finish completes, fails and gives back many tasks of one owner at once:
// one statement for up to 2,000 rows on PostgreSQL and SQLite (250 on
// SQL Server, 32 on MySQL and MariaDB), and on Oracle and Dameng, whose
// UPDATE cannot return the rows it changed, a short transaction that locks
// the rows still held, updates them and commits. Each row is checked on
// its own, as Complete, Fail and GiveBack check it: changed only where
// its task's owner holds it at the task's Version. notClaimed are the
// indexes in results (ascending) of the tasks their owner no longer held —
// their rows unchanged, as ErrNotClaimed leaves a row; the other tasks'
// Versions move on. Every task must have the same Owner, and a task may
// appear once; otherwise nothing is sent and the error matches
// ErrInvalid. On a database error, the rows of statements already sent
// are finished and nothing is reported for any row.
func (q *Queue) Finish(ctx context.Context, results ...Result) (notClaimed []int, err error) {
	items := make([]claimtable.Finished, len(results))
	for i, r := range results {
		items[i] = claimtable.Finished{Task: (*claimtable.Task)(r.Task), Outcome: r.Outcome}
	}
	return q.cl.FinishMany(ctx, items)
}

// Extend renews t's claim lease to d from the database's now (0: the
// queue's lease), for a task that runs longer than expected.
func (q *Queue) Extend(ctx context.Context, t *Task, d time.Duration) error {
	return q.cl.Extend(ctx, (*claimtable.Task)(t), d)
}

// Add inserts tasks as ready rows, in one transaction.
func (q *Queue) Add(ctx context.Context, tasks ...NewTask) error {
	rows := make([]claimtable.NewTask, len(tasks))
	for i := range tasks {
		rows[i] = claimtable.NewTask(tasks[i])
	}
	return q.cl.Add(ctx, rows...)
}

// CreateTable creates the default task table and its claim index unless
// they exist; a mapped table (Options.Columns) is refused.
func (q *Queue) CreateTable(ctx context.Context) error { return q.cl.CreateTable(ctx) }

// Strategy is how this queue claims.
func (q *Queue) Strategy() Strategy { return q.cl.Strategy() }

// Warnings are problems of the options that do not stop claims (a lease
// shorter than the expected run time).
func (q *Queue) Warnings() []string { return q.cl.Warnings() }

// Close releases the prepared statements and the connections. Rows still
// claimed stay claimed until their lease runs out.
func (q *Queue) Close() error {
	_ = q.cl.Close()
	return q.backend.Close()
}
