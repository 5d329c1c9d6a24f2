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

// Types shared with the engine: values pass freely between the two.
type (
	// Task is one claimed row.
	Task = claimtable.Task
	// NewTask is a row for Add.
	NewTask = claimtable.NewTask
	// Request is one Claim: the owner, how many rows, the task type.
	Request = claimtable.Request
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
func (q *Queue) Claim(ctx context.Context, r Request) ([]Task, error) { return q.cl.Claim(ctx, r) }

// Complete marks t done; ErrNotClaimed (row unchanged) when t's owner no
// longer holds it.
func (q *Queue) Complete(ctx context.Context, t *Task) error { return q.cl.Complete(ctx, t) }

// Fail counts a failure of t: ready again after the back-off while its
// retries last, then failed for good.
func (q *Queue) Fail(ctx context.Context, t *Task) error { return q.cl.Fail(ctx, t) }

// GiveBack returns t to the ready rows without counting a failure.
func (q *Queue) GiveBack(ctx context.Context, t *Task) error { return q.cl.GiveBack(ctx, t) }

// Extend renews t's claim lease to d from the database's now (0: the
// queue's lease), for a task that runs longer than expected.
func (q *Queue) Extend(ctx context.Context, t *Task, d time.Duration) error {
	return q.cl.Extend(ctx, t, d)
}

// Add inserts tasks as ready rows, in one transaction.
func (q *Queue) Add(ctx context.Context, tasks ...NewTask) error { return q.cl.Add(ctx, tasks...) }

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
