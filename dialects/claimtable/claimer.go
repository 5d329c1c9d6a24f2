package claimtable

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// MaxBatch is the most rows one Claim may ask for.
const MaxBatch = 10000

// DefaultLease is the claim lease when Options.Lease is zero.
const DefaultLease = 5 * time.Minute

// DefaultMaxRetries is the failures a row may have before it fails for
// good, for tables without a max_retries column and for Add.
const DefaultMaxRetries = 3

// statementParams caps the placeholders of one statement everywhere at
// SQL Server's 2,100 (less a margin for the fixed ones), below any
// dialect's own limit, so statements look alike on every database and a
// large batch is cut the same way on each.
const statementParams = 2100 - 8

// perStatement is how many values of n placeholders each fit in one
// statement on b.
func perStatement(b Builder, n int) int { return max(1, min(b.MaxParams()-8, statementParams)/n) }

// optimisticRounds bounds the rounds of an optimistic claim that lost
// rows to other workers before it returns what it has.
const optimisticRounds = 3

// Options tune a Claimer. The zero value: the strategy the probe
// recommends, a 5-minute lease, 3 retries, exponential back-off from 1s.
type Options struct {
	// Strategy overrides the probe's recommendation.
	Strategy dialects.ClaimStrategy
	// Lease is how long a claim lasts before the row is overdue and may be
	// claimed again (default DefaultLease). Extend renews it.
	Lease time.Duration
	// ExpectedRun is how long a task is expected to run; a Lease shorter
	// than it is reported by Warnings (the row would be claimed twice).
	ExpectedRun time.Duration
	// MaxRetries is the failures allowed when the table has no max_retries
	// column, and the default of Add (default DefaultMaxRetries).
	MaxRetries int
	// Backoff is the delay before a failed row is due again, given its
	// failures so far (1 after the first); default DefaultBackoff.
	Backoff func(failures int) time.Duration
}

// DefaultBackoff doubles from one second per failure, up to an hour.
func DefaultBackoff(failures int) time.Duration {
	d := time.Second
	for i := 1; i < failures && d < time.Hour; i++ {
		d *= 2
	}
	return min(d, time.Hour)
}

// Task is one claimed row.
type Task struct {
	ID         int64
	Type       string
	Payload    []byte
	Priority   int64
	Due        time.Time // when it was due (UTC)
	Retries    int       // failures before this claim
	MaxRetries int
	Owner      string
	// Version is the row version this claim holds; Complete, Fail,
	// GiveBack and Extend match it, and Extend moves it on.
	Version int64
	// ClaimedUntil is the claim lease end as the database computed it
	// (read before the row was written, so never later than stored).
	ClaimedUntil time.Time
}

// Request is one Claim.
type Request struct {
	// Owner identifies the worker (dialects.CheckOwner rules); it must be
	// unique per worker: two workers with one owner are one worker.
	Owner string
	// Max is how many rows to claim at most, 1 to MaxBatch.
	Max int
	// Type, when set, claims only rows of that task type.
	Type string
	// Lease overrides Options.Lease for this claim.
	Lease time.Duration
}

// Claimer claims rows of one task table with one strategy. It is safe for
// concurrent use; it owns no connection (the *sql.DB is the caller's).
type Claimer struct {
	db       *sql.DB
	b        Builder
	c        cols
	strategy dialects.ClaimStrategy
	opts     Options
	warnings []string

	// stmts are the one-statement claims prepared on db, by SQL text (a
	// text depends only on the request's shape; its values are bound),
	// at most maxPrepared of them.
	stmts    sync.Map // string → *sql.Stmt
	prepared atomic.Int32
}

// maxPrepared bounds the statements a Claimer keeps prepared: its claims,
// completions and batch finishes, each by text.
const maxPrepared = 64

// New returns the claimer of table t on db with builder b and strategy
// (required here: Open picks it from the probe). A strategy b cannot run
// gives ErrUnsupported; a bad table or options ErrInvalid.
func New(db *sql.DB, b Builder, t Table, strategy dialects.ClaimStrategy, opts Options) (*Claimer, error) {
	t, err := t.Resolve()
	if err != nil {
		return nil, err
	}
	if !slices.Contains(b.Strategies(), strategy) {
		return nil, dialects.Wrap(b.Dialect(), "claim", fmt.Errorf("%w: claim strategy %q (this database claims with %v)", dialects.ErrUnsupported, strategy, b.Strategies()))
	}
	switch {
	case opts.Lease < 0:
		return nil, fmt.Errorf("%w: claim lease must not be negative, got %s", dialects.ErrInvalid, opts.Lease)
	case opts.ExpectedRun < 0:
		return nil, fmt.Errorf("%w: expected run time must not be negative, got %s", dialects.ErrInvalid, opts.ExpectedRun)
	case opts.MaxRetries < 0:
		return nil, fmt.Errorf("%w: max retries must not be negative, got %d", dialects.ErrInvalid, opts.MaxRetries)
	}
	if opts.Lease == 0 {
		opts.Lease = DefaultLease
	}
	if opts.MaxRetries == 0 {
		opts.MaxRetries = DefaultMaxRetries
	}
	if opts.Backoff == nil {
		opts.Backoff = DefaultBackoff
	}
	cl := &Claimer{db: db, b: b, c: cols{t: t, b: b}, strategy: strategy, opts: opts}
	if w := LeaseWarning(opts.Lease, opts.ExpectedRun); w != "" {
		cl.warnings = append(cl.warnings, w)
	}
	return cl, nil
}

// LeaseWarning says why a claim lease shorter than the expected run time
// is unsafe, or "" when it is not.
func LeaseWarning(lease, expectedRun time.Duration) string {
	if expectedRun <= 0 || lease >= expectedRun {
		return ""
	}
	return fmt.Sprintf("claim lease %s is shorter than the expected run time %s: a row still running becomes overdue and another worker claims it again; lengthen the lease or extend it while the task runs", lease, expectedRun)
}

// Strategy is the claimer's strategy.
func (cl *Claimer) Strategy() dialects.ClaimStrategy { return cl.strategy }

// Table is the resolved task table.
func (cl *Claimer) Table() Table { return cl.c.t }

// Builder is the claimer's SQL vocabulary.
func (cl *Claimer) Builder() Builder { return cl.b }

// Warnings are the problems of the options that do not stop claims (a
// lease shorter than the expected run time).
func (cl *Claimer) Warnings() []string { return slices.Clone(cl.warnings) }

// checkRequest validates r and fills its lease.
func (cl *Claimer) checkRequest(r Request) (Request, error) {
	if err := dialects.CheckOwner(r.Owner); err != nil {
		return r, err
	}
	switch {
	case r.Max < 1:
		return r, fmt.Errorf("%w: batch size %d: claim at least 1 row", dialects.ErrInvalid, r.Max)
	case r.Max > MaxBatch:
		return r, fmt.Errorf("%w: batch size %d is above the limit of %d rows per claim: claim in several batches", dialects.ErrInvalid, r.Max, MaxBatch)
	case r.Lease < 0:
		return r, fmt.Errorf("%w: claim lease must not be negative, got %s", dialects.ErrInvalid, r.Lease)
	}
	if r.Lease == 0 {
		r.Lease = cl.opts.Lease
	}
	return r, nil
}

// Claim takes up to r.Max due rows for r.Owner, by priority then due
// time, each row exactly once across every worker, with a claim lease of
// r.Lease. It returns fewer rows (or none, and no error) when fewer are
// due or free; the tasks are in claim order.
func (cl *Claimer) Claim(ctx context.Context, r Request) ([]Task, error) {
	r, err := cl.checkRequest(r)
	if err != nil {
		return nil, err
	}
	var tasks []Task
	if text, args, ok := cl.single(r); ok {
		err = cl.retrying(ctx, func() (err error) {
			tasks, err = cl.queryTasks(ctx, cl.statement(ctx, text), text, args, r.Max)
			return err
		})
	} else if cl.strategy == dialects.ClaimOptimistic {
		tasks, err = cl.claimOptimistic(ctx, r)
	} else {
		err = cl.retrying(ctx, func() (err error) {
			tasks, err = cl.claimLocked(ctx, r)
			return err
		})
	}
	if err != nil {
		return nil, cl.wrap("claim", err)
	}
	for i := range tasks {
		tasks[i].Owner = r.Owner
		if tasks[i].MaxRetries < 0 {
			tasks[i].MaxRetries = cl.opts.MaxRetries
		}
	}
	sortTasks(tasks)
	return tasks, nil
}

// sortTasks puts tasks in claim order.
func sortTasks(tasks []Task) {
	slices.SortFunc(tasks, func(a, b Task) int {
		switch {
		case a.Priority != b.Priority:
			return -cmpInt(a.Priority, b.Priority)
		case !a.Due.Equal(b.Due):
			return a.Due.Compare(b.Due)
		}
		return cmpInt(a.ID, b.ID)
	})
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// claimSet is the SET list of a claim: status claimed, owner, the lease
// from now, version + 1, updated_at.
func (cl *Claimer) claimSet(q *query, owner string, lease time.Duration) []string {
	col, now := cl.c.c(), cl.b.Now()
	set := []string{
		col.Status + " = " + q.arg(cl.c.t.Statuses.Claimed),
		col.Owner + " = " + q.arg(owner),
		col.ClaimedUntil + " = " + cl.b.PlusMs(now, q.arg(lease.Milliseconds())),
		col.Version + " = " + col.Version + " + 1",
	}
	if col.UpdatedAt != "" {
		set = append(set, col.UpdatedAt+" = "+now)
	}
	return set
}

// where is the claim predicate, with the type filter when r has one.
func (cl *Claimer) where(q *query, r Request) string {
	w := cl.c.eligible(q, cl.b.Now())
	if r.Type != "" {
		if cl.c.c().Type == "" {
			w += " AND 1 = 0" // the table has no types; no row is of r.Type
		} else {
			w += " AND " + cl.c.c().Type + " = " + q.arg(r.Type)
		}
	}
	return w
}

// single is the one-statement claim, when the dialect has one for the
// strategy.
func (cl *Claimer) single(r Request) (string, []any, bool) {
	q := &query{b: cl.b}
	sc := SingleClaim{Table: cl.c.t.Name, ID: cl.c.c().ID}
	sc.Where = cl.where(q, r)
	sc.OrderBy = cl.c.order("")
	sc.Limit = q.arg(int64(r.Max))
	sc.Set = cl.claimSet(q, r.Owner, r.Lease)
	sc.Returning = cl.c.taskColumns
	text, ok := cl.b.Single(cl.strategy, sc)
	return text, q.args, ok
}

// claimLocked claims in one short transaction: lock up to r.Max rows
// (SKIP LOCKED / READPAST), update them by id, commit.
func (cl *Claimer) claimLocked(ctx context.Context, r Request) (tasks []Task, err error) {
	tx, err := cl.db.BeginTx(ctx, cl.b.TxOptions())
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	q := &query{b: cl.b}
	// The lease end as now in ms plus the lease: EpochMs may repeat its
	// argument, and a placeholder must appear once (Oracle, Dameng).
	columns := append(cl.c.taskColumns(""), "("+cl.b.EpochMs(cl.b.Now())+" + "+q.arg(r.Lease.Milliseconds())+")")
	s := Select{Columns: columns, Table: cl.c.t.Name, Where: cl.where(q, r), OrderBy: cl.c.order(""), Lock: true}
	if cl.b.LimitsLocked() {
		s.Limit = q.arg(int64(r.Max))
	}
	tasks, err = cl.queryTasks(ctx, tx, cl.b.Select(s), q.args, r.Max, untilColumn)
	if err != nil || len(tasks) == 0 {
		if err == nil {
			err = tx.Commit()
		}
		return nil, err
	}
	ids := make([]int64, len(tasks))
	for i := range tasks {
		ids[i] = tasks[i].ID
		tasks[i].Version++
	}
	for _, chunk := range chunks(ids, perStatement(cl.b, 1)) {
		q := &query{b: cl.b}
		set := cl.claimSet(q, r.Owner, r.Lease)
		where := inList(q, cl.c.c().ID, chunk)
		if _, err = tx.ExecContext(ctx, "UPDATE "+cl.c.t.Name+" SET "+join(set)+" WHERE "+where, q.args...); err != nil {
			return nil, err
		}
	}
	return tasks, tx.Commit()
}

// claimOptimistic reads due rows without locks and claims each with its
// version; the rows another worker moved on first are lost, and the claim
// reads again (at most optimisticRounds times) for the rest.
func (cl *Claimer) claimOptimistic(ctx context.Context, r Request) ([]Task, error) {
	var won []Task
	for round := 0; round < optimisticRounds && len(won) < r.Max; round++ {
		need := r.Max - len(won)
		q := &query{b: cl.b}
		col := cl.c.c()
		s := Select{Columns: []string{col.ID, col.Version}, Table: cl.c.t.Name, Where: cl.where(q, r), OrderBy: cl.c.order("")}
		s.Limit = q.arg(int64(need))
		var ids, versions []int64
		err := cl.retrying(ctx, func() (err error) {
			ids, versions, err = cl.queryIDs(ctx, cl.b.Select(s), q.args)
			return err
		})
		if err != nil {
			return nil, err
		}
		if len(ids) == 0 {
			break
		}
		per := perStatement(cl.b, 2)
		var claimed int64
		for i := 0; i < len(ids); i += per {
			j := min(i+per, len(ids))
			q := &query{b: cl.b}
			set := cl.claimSet(q, r.Owner, r.Lease)
			where := cl.where(q, r) + " AND " + pairs(q, col.ID, col.Version, ids[i:j], versions[i:j])
			var n int64
			err := cl.retrying(ctx, func() error {
				res, err := cl.db.ExecContext(ctx, "UPDATE "+cl.c.t.Name+" SET "+join(set)+" WHERE "+where, q.args...)
				if err != nil {
					return err
				}
				n, err = res.RowsAffected()
				return err
			})
			if err != nil {
				return nil, err
			}
			claimed += n
		}
		if claimed > 0 {
			next := make([]int64, len(versions))
			for i, v := range versions {
				next[i] = v + 1
			}
			for i := 0; i < len(ids); i += per {
				j := min(i+per, len(ids))
				q := &query{b: cl.b}
				where := col.Owner + " = " + q.arg(r.Owner) + " AND " + col.Status + " = " + q.arg(cl.c.t.Statuses.Claimed) +
					" AND " + pairs(q, col.ID, col.Version, ids[i:j], next[i:j])
				var got []Task
				err := cl.retrying(ctx, func() (err error) {
					got, err = cl.queryTasks(ctx, cl.db, cl.b.Select(Select{Columns: cl.c.taskColumns(""), Table: cl.c.t.Name, Where: where}), q.args, j-i)
					return err
				})
				if err != nil {
					return nil, err
				}
				won = append(won, got...)
			}
		}
		if len(ids) < need || claimed == int64(len(ids)) {
			break // no more due rows, or every one was won
		}
	}
	return won, nil
}

// statement is the claim statement text prepared on the pool, once per
// text (the database then parses and plans it once per connection, not
// on every claim); the pool itself when preparing fails or maxPrepared
// texts are kept already.
func (cl *Claimer) statement(ctx context.Context, text string) queryer {
	if st := cl.prepare(ctx, text); st != nil {
		return preparedQuery{st}
	}
	return cl.db
}

// WritePreparer is implemented by a Builder whose driver parses every
// statement it is sent unless it was prepared (SQLite's): the engine then
// prepares its completions and batch finishes as it prepares its claims.
// Elsewhere the driver caches the statements itself (pgx) or sends
// unprepared ones in one round trip with their values (go-sql-driver's
// interpolateParams), and a statement prepared through database/sql
// would only cost a prepare per pooled connection.
type WritePreparer interface {
	PrepareWrites() bool
}

// preparesWrites reports whether the completions and finishes run
// prepared.
func (cl *Claimer) preparesWrites() bool {
	p, ok := cl.b.(WritePreparer)
	return ok && p.PrepareWrites()
}

// exec runs a completion or finish: prepared where the Builder asks for
// it (WritePreparer), else on the pool.
func (cl *Claimer) exec(ctx context.Context, text string, args ...any) (sql.Result, error) {
	if cl.preparesWrites() {
		if st := cl.prepare(ctx, text); st != nil {
			return st.ExecContext(ctx, args...)
		}
	}
	return cl.db.ExecContext(ctx, text, args...)
}

// prepare is text prepared on the pool, kept by text, at most maxPrepared
// of them; nil when preparing fails or the Claimer keeps maxPrepared
// already.
func (cl *Claimer) prepare(ctx context.Context, text string) *sql.Stmt {
	if st, ok := cl.stmts.Load(text); ok {
		return st.(*sql.Stmt)
	}
	if cl.prepared.Load() >= maxPrepared {
		return nil
	}
	st, err := cl.db.PrepareContext(ctx, text)
	if err != nil {
		return nil
	}
	if prev, loaded := cl.stmts.LoadOrStore(text, st); loaded {
		_ = st.Close()
		return prev.(*sql.Stmt)
	}
	cl.prepared.Add(1)
	return st
}

// Close frees the prepared claim statements; the Claimer prepares them
// again if it is used after.
func (cl *Claimer) Close() error {
	cl.stmts.Range(func(text, st any) bool {
		cl.stmts.Delete(text)
		cl.prepared.Add(-1)
		_ = st.(*sql.Stmt).Close()
		return true
	})
	return nil
}

// preparedQuery runs a prepared statement as a queryer (the text it is
// given is the statement's own).
type preparedQuery struct{ st *sql.Stmt }

func (p preparedQuery) QueryContext(ctx context.Context, _ string, args ...any) (*sql.Rows, error) {
	return p.st.QueryContext(ctx, args...)
}

// queryer is a *sql.DB or *sql.Tx.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// untilColumn marks a claim select whose last column is the lease end.
const untilColumn = true

// queryTasks runs a claim's query and scans at most max tasks; with
// until, the row has one more column, the lease end to report.
func (cl *Claimer) queryTasks(ctx context.Context, q queryer, text string, args []any, max int, until ...bool) ([]Task, error) {
	rows, err := q.QueryContext(ctx, text, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var tasks []Task
	for len(tasks) < max && rows.Next() {
		var t Task
		var typ sql.NullString
		var due, claimedUntil, leaseEnd sql.NullInt64
		dest := []any{&t.ID, &typ, &t.Payload, &t.Priority, &due, &t.Retries, &t.MaxRetries, &t.Version, &claimedUntil}
		if len(until) > 0 && until[0] {
			dest = append(dest, &leaseEnd)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		t.Type = typ.String
		t.Due = time.UnixMilli(due.Int64).UTC()
		if leaseEnd.Valid {
			claimedUntil = leaseEnd
		}
		if claimedUntil.Valid {
			t.ClaimedUntil = time.UnixMilli(claimedUntil.Int64).UTC()
		}
		tasks = append(tasks, t)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return tasks, rows.Close()
}

// queryIDs reads the id and version of candidate rows.
func (cl *Claimer) queryIDs(ctx context.Context, text string, args []any) (ids, versions []int64, err error) {
	rows, err := cl.db.QueryContext(ctx, text, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, v int64
		if err := rows.Scan(&id, &v); err != nil {
			return nil, nil, err
		}
		ids, versions = append(ids, id), append(versions, v)
	}
	return ids, versions, rows.Err()
}

// wrap names the dialect and operation, and says so plainly when the task
// table is missing.
func (cl *Claimer) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if m, ok := cl.b.(ErrorMapper); ok {
		err = m.MapError(err)
	}
	if cl.b.IsMissingTable(err) {
		err = fmt.Errorf("%w: task table %s does not exist (create it, or map your own table's columns): %w", dialects.ErrNoTable, cl.c.t.Name, err)
	}
	if errors.Is(err, dialects.ErrInvalid) || errors.Is(err, dialects.ErrNotOwner) {
		return err
	}
	return dialects.Wrap(cl.b.Dialect(), op, err)
}

func join(parts []string) string {
	out := ""
	for i, p := range parts {
		if i > 0 {
			out += ", "
		}
		out += p
	}
	return out
}

// chunks splits ids into slices of at most n.
func chunks(ids []int64, n int) [][]int64 {
	n = max(n, 1)
	var out [][]int64
	for len(ids) > n {
		out = append(out, ids[:n])
		ids = ids[n:]
	}
	return append(out, ids)
}
