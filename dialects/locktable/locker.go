package locktable

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/internal/batch"
)

// Locker is the table-strategy dialects.TableLocker for one lock table,
// driven by a dialect's Builder. Each statement is prepared once, on first
// use, so every acquire, refresh and release is one round trip. A Locker is
// safe for concurrent use.
type Locker struct {
	db       *sql.DB
	b        Builder
	schema   dialects.Schema
	maxRunes int
	zone     *time.Location   // writer time zone; nil: UTC
	clock    func() time.Time // picks the zone's frame; nil: time.Now (tests set it)

	retiredMu sync.Mutex
	retired   []*sql.Stmt // prepared for an earlier zone frame; closed by Close

	stmts    [numOps]preparedStmt
	prepares atomic.Int64
	sent     [numOps]atomic.Int64

	nameColMu sync.Mutex // serialises the catalog read of the name column
	nameCol   nameColumnState

	wholeSeconds atomic.Bool // the lease-end column keeps whole seconds (precision.go)

	refreshes *batch.Queue[refreshReq, renewal] // refreshes waiting for a batch (batch.go)
	leaseSeq  atomic.Uint64                     // numbers the leases, for RefreshAll's lock order

	sweeps    sync.WaitGroup // deletions of kept rows in flight (rowdelete.go)
	closing   chan struct{}  // closed by Close: pending deletions give up
	closeOnce sync.Once
}

var (
	_ dialects.TableLocker  = (*Locker)(nil)
	_ dialects.TableDropper = (*Locker)(nil)
)

// New returns the Locker for table t on db with b's SQL. It sends nothing:
// statements are prepared on first use, and a missing table shows up then
// as a *dialects.MissingTableError. Tables are never created implicitly;
// see CreateTable.
func New(db *sql.DB, b Builder, t dialects.Table) (*Locker, error) {
	if db == nil || b == nil {
		return nil, dialects.Invalidf("locktable.New needs a database and a builder")
	}
	schema, err := t.Schema()
	if err != nil {
		return nil, dialects.Wrap(b.Dialect(), "table locker", err)
	}
	maxRunes := b.MaxNameRunes(schema)
	if maxRunes < 17 {
		return nil, dialects.Wrap(b.Dialect(), "table locker", fmt.Errorf("builder allows names of %d characters, at least 17 are needed to map long names", maxRunes))
	}
	l := &Locker{db: db, b: b, schema: schema, maxRunes: maxRunes, zone: schema.Location(), closing: make(chan struct{})}
	l.refreshes = batch.New(RefreshWindow, l.sendRefreshes)
	for o := range opNameColumn {
		l.stmts[o].spec = l.build(o, schema)
	}
	return l, nil
}

// Strategy reports dialects.StrategyTable.
func (l *Locker) Strategy() dialects.Strategy { return dialects.StrategyTable }

// Schema is the table layout in use.
func (l *Locker) Schema() dialects.Schema { return l.schema }

// CreateSQL is the builder's CREATE TABLE IF NOT EXISTS statement.
func (l *Locker) CreateSQL() string { return l.b.Create(l.schema) }

// StoredName is the name as the table stores it: name itself, or on the
// native table dialects.MapName(name, limit) when it is longer than the
// name column allows (the Builder's FitName instead, when it is a
// NameFitter). Preset tables store every name as it is, and refuse one
// their column cannot hold (dialects.NameTooLongError).
func (l *Locker) StoredName(name string) string {
	if l.schema.StoresNamesVerbatim() {
		return name
	}
	if f, ok := l.b.(NameFitter); ok {
		return f.FitName(name, l.maxRunes)
	}
	return dialects.MapName(name, l.maxRunes)
}

// CreateTable creates the lock table when it does not exist.
func (l *Locker) CreateTable(ctx context.Context) error {
	_, err := l.db.ExecContext(ctx, l.CreateSQL())
	return dialects.Wrap(l.b.Dialect(), "create table", dialects.Classify(l.b, err))
}

// Acquire takes the lock called name with one statement that inserts its
// row or takes over an expired one. It tries once when opts.Wait is 0, else
// again every opts.RetryEvery until opts.Wait has passed (one last try at
// the deadline). A lock held by another owner gives a *dialects.HeldError
// naming the holder and its lease end, read with one Inspect.
//
// The lease's Until is the host time before the statement was sent plus
// opts.AtMost, so it never outlasts the row's lease on the database clock
// when the clocks agree; when Until passes without a Refresh the lease is
// lost and Done closes.
func (l *Locker) Acquire(ctx context.Context, name string, opts dialects.Options) (dialects.Lease, error) {
	if err := dialects.CheckName(name); err != nil {
		return nil, dialects.Wrap(l.b.Dialect(), "acquire", err)
	}
	opts, err := opts.Normalize()
	if err != nil {
		return nil, dialects.Wrap(l.b.Dialect(), "acquire", err)
	}
	if err := l.checkName(ctx, name); err != nil {
		return nil, dialects.Wrap(l.b.Dialect(), "acquire", err)
	}
	// Transient errors are retried inside each statement (retrying).
	lease, err := dialects.RetryAcquire(ctx, opts, func() (dialects.Lease, error) { return l.try(ctx, name, opts) }, nil)
	return lease, dialects.Wrap(l.b.Dialect(), "acquire", err)
}

// try sends the acquire statement once. Once sent it is waited for
// (dialects.Settled), and a lock it took as ctx ended is released again:
// a statement cut off in flight may commit all the same, and its lock
// would stay taken until at-most passes.
func (l *Locker) try(ctx context.Context, name string, opts dialects.Options) (dialects.Lease, error) {
	stored := l.StoredName(name)
	b := binding{name: stored, owner: opts.Owner, atMost: opts.AtMost, atLeast: opts.AtLeast}
	start := time.Now()
	value, done, err := l.exec(ctx, opAcquire, b)
	if err != nil {
		return nil, dialects.Wrap(l.b.Dialect(), "acquire", err)
	}
	if !done {
		held := &dialects.HeldError{Name: name}
		if row, found, err := l.inspectStored(ctx, stored); err == nil && found {
			held.Holder, held.Until = row.Owner, row.Until
		}
		return nil, dialects.Wrap(l.b.Dialect(), "acquire", held)
	}
	s := l.newLease(name, stored, opts.Owner, 0, opts, false)
	s.lockedAt = start
	if s.hasToken {
		s.token = value
		if l.stmts[opAcquire].spec.Result == ResultRowsAffected {
			// The statement said only that it changed the row: read the
			// token (even when ctx has ended: the release below needs it).
			rctx, cancel := dialects.Detached(ctx)
			row, found, err := l.inspectStored(rctx, stored)
			cancel()
			if err == nil && found && row.Owner == opts.Owner {
				s.token = row.Token
			} else {
				s.token = 0
			}
		}
	}
	s.start(start.Add(opts.AtMost))
	if err := ctx.Err(); err != nil {
		return nil, dialects.Wrap(l.b.Dialect(), "acquire", s.abandon(ctx, err))
	}
	return s, nil
}

// Handle rebuilds the lease of a lock that owner holds, for example one
// taken by another process, so that it can be refreshed or released under
// the owner check. token 0 skips the token comparison. opts supplies AtMost
// and AtLeast for Refresh and Release; its Owner is ignored. The lease's
// Until is zero until a Refresh succeeds. When another owner holds the
// lock, Refresh and Release fail with dialects.ErrNotOwner and change
// nothing.
func (l *Locker) Handle(name, owner string, token int64, opts dialects.Options) (dialects.Lease, error) {
	opts, err := dialects.HandleOptions(name, owner, token, opts)
	if err != nil {
		return nil, dialects.Wrap(l.b.Dialect(), "handle", err)
	}
	s := l.newLease(name, l.StoredName(name), owner, token, opts, true)
	s.start(time.Time{})
	return s, nil
}

// Inspect reads the row of name; found is false when there is none.
// Row.Name is the name as stored (see StoredName), as List shows it. A
// name a preset table cannot hold is a *dialects.NameTooLongError.
func (l *Locker) Inspect(ctx context.Context, name string) (dialects.Row, bool, error) {
	if err := l.checkName(ctx, name); err != nil {
		return dialects.Row{}, false, dialects.Wrap(l.b.Dialect(), "inspect", err)
	}
	row, found, err := l.inspectStored(ctx, l.StoredName(name))
	return row, found, dialects.Wrap(l.b.Dialect(), "inspect", err)
}

// List reads every row of the table, ordered by name. An empty table gives
// an empty, non-nil slice.
func (l *Locker) List(ctx context.Context) ([]dialects.Row, error) {
	rows, err := l.query(ctx, opList, binding{})
	if err != nil {
		return nil, dialects.Wrap(l.b.Dialect(), "list", err)
	}
	defer rows.Close()
	out := []dialects.Row{}
	for rows.Next() {
		row, err := l.scanRow(rows, true)
		if err != nil {
			return nil, dialects.Wrap(l.b.Dialect(), "list", err)
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		return nil, dialects.Wrap(l.b.Dialect(), "list", l.classify(err))
	}
	return out, nil
}

// Expire ends the lease of name now, whoever holds it (administrative
// force-unlock): the row stays, its lease end becomes the database's now.
// It reports false when there was no live lease to end. On a table whose
// release deletes the row (sys_sched_lock) it deletes the row instead,
// live or expired, and reports false when there was none.
func (l *Locker) Expire(ctx context.Context, name string) (bool, error) {
	if err := l.checkName(ctx, name); err != nil {
		return false, dialects.Wrap(l.b.Dialect(), "expire", err)
	}
	if l.deletesRows() {
		done, err := l.deleteRow(ctx, l.StoredName(name))
		return done, dialects.Wrap(l.b.Dialect(), "expire", err)
	}
	_, done, err := l.exec(ctx, opExpire, binding{name: l.StoredName(name)})
	if err != nil {
		return false, dialects.Wrap(l.b.Dialect(), "expire", err)
	}
	return done, nil
}
