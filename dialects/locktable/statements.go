package locktable

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// op is one of the statements a Locker sends.
type op int

const (
	opAcquire op = iota
	opRefresh
	opRelease
	opExpire
	opInspect
	opList
	// The statements of tables whose release deletes the row (RowDeleter),
	// and the catalog read of the name column (NameColumnBuilder, sent
	// unprepared).
	opReleaseDelete
	opSweep
	opDelete
	opNameColumn
	// The statement that renews many leases at once (BatchRefresher),
	// built for each batch, never prepared.
	opRefreshBatch
	numOps
)

var opNames = [numOps]string{"acquire", "refresh", "release", "expire", "inspect", "list", "release-delete", "sweep", "delete", "name-column", "refresh-batch"}

func (o op) String() string { return opNames[o] }

// preparedStmt is one builder statement, prepared on first use and then
// reused. A failed prepare is not remembered, so the next use tries again.
// With a writer time zone the statement is prepared again, from the
// builder, when the zone's frame changes (see dialects.ZoneFrame); its
// arguments and result kind never change with the frame.
type preparedStmt struct {
	spec Stmt
	mu   sync.Mutex // serialises the first prepare
	stmt atomic.Pointer[framedStmt]
}

// framedStmt is a prepared statement and the zone frame it renders.
type framedStmt struct {
	stmt  *sql.Stmt
	frame dialects.ZoneFrame
	whole bool // rendered with Schema.UntilWholeSeconds
}

// binding holds the values a statement's Args refer to.
type binding struct {
	name    string // stored name, after MapName
	owner   string
	token   int64
	atMost  time.Duration
	atLeast time.Duration
}

// values returns the bind values for args, in placeholder order.
func (b binding) values(args []Arg) ([]any, error) {
	out := make([]any, len(args))
	for i, a := range args {
		switch a {
		case ArgName:
			out[i] = b.name
		case ArgOwner:
			out[i] = b.owner
		case ArgToken:
			out[i] = b.token
		case ArgAtMostMs:
			out[i] = b.atMost.Milliseconds()
		case ArgAtLeastMs:
			out[i] = b.atLeast.Milliseconds()
		default:
			return nil, fmt.Errorf("statement parameter %d has unknown argument kind %d", i+1, a)
		}
	}
	return out, nil
}

// prepared returns the prepared statement for o, preparing it once.
func (l *Locker) prepared(ctx context.Context, o op) (*sql.Stmt, []Arg, error) {
	p := &l.stmts[o]
	frame, whole := l.frameNow(), l.wholeSeconds.Load()
	if s := p.stmt.Load(); s != nil && s.frame == frame && s.whole == whole {
		return s.stmt, p.spec.Args, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.stmt.Load()
	if old != nil && old.frame == frame && old.whole == whole {
		return old.stmt, p.spec.Args, nil
	}
	l.prepares.Add(1)
	s, err := l.db.PrepareContext(ctx, l.sqlFor(o, frame, whole))
	if err != nil {
		return nil, nil, l.classify(fmt.Errorf("prepare %s: %w", o, err))
	}
	p.stmt.Store(&framedStmt{stmt: s, frame: frame, whole: whole})
	if old != nil {
		l.retire(old.stmt)
	}
	return s, p.spec.Args, nil
}

// exec sends the statement of o (acquire, refresh, release or expire) and
// reads its outcome as its Result says: done reports whether a row was
// changed, and value is the token for ResultRow and ResultInsertID (1 when
// the schema has no token column) or the row count for ResultRowsAffected.
func (l *Locker) exec(ctx context.Context, o op, b binding) (value int64, done bool, err error) {
	defer func() {
		if o == opAcquire && l.isDuplicateKey(err) {
			value, done, err = 0, false, nil // another session inserted the row first: held
		}
	}()
	stmt, args, err := l.prepared(ctx, o)
	if err != nil {
		return 0, false, err
	}
	vals, err := b.values(args)
	if err != nil {
		return 0, false, err
	}
	send := func(ctx context.Context) (struct{}, error) {
		value, done, err = l.execOnce(ctx, o, stmt, vals)
		return struct{}{}, err
	}
	err = l.retrying(ctx, func() error {
		if o == opAcquire {
			_, err := dialects.Settled(ctx, send) // see Locker.try
			return err
		}
		_, err := send(ctx)
		return err
	})
	return value, done, err
}

// execOnce sends the prepared statement of o once and reads its outcome.
func (l *Locker) execOnce(ctx context.Context, o op, stmt *sql.Stmt, vals []any) (value int64, done bool, err error) {
	l.sent[o].Add(1)
	switch l.stmts[o].spec.Result {
	case ResultRow:
		err = stmt.QueryRowContext(ctx, vals...).Scan(&value)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, false, nil
		}
		if err != nil {
			return 0, false, l.classify(err)
		}
		return value, true, nil
	case ResultInsertID:
		res, err := stmt.ExecContext(ctx, vals...)
		if err != nil {
			return 0, false, l.classify(err)
		}
		value, err = res.LastInsertId()
		if err != nil {
			return 0, false, fmt.Errorf("read the insert id: %w", err)
		}
		return value, value >= 1, nil
	case ResultRowsAffected:
		res, err := stmt.ExecContext(ctx, vals...)
		if err != nil {
			return 0, false, l.classify(err)
		}
		value, err = res.RowsAffected()
		if err != nil {
			return 0, false, fmt.Errorf("read the affected row count: %w", err)
		}
		return value, value >= 1, nil
	default:
		return 0, false, fmt.Errorf("%s statement has unknown result kind %d", o, l.stmts[o].spec.Result)
	}
}

// query sends the statement of o (inspect or list) and returns its rows.
func (l *Locker) query(ctx context.Context, o op, b binding) (*sql.Rows, error) {
	stmt, args, err := l.prepared(ctx, o)
	if err != nil {
		return nil, err
	}
	vals, err := b.values(args)
	if err != nil {
		return nil, err
	}
	var rows *sql.Rows
	err = l.retrying(ctx, func() error {
		l.sent[o].Add(1)
		var err error
		rows, err = stmt.QueryContext(ctx, vals...)
		return err
	})
	if err != nil {
		return nil, l.classify(err)
	}
	return rows, nil
}

// classify turns a missing-table error into a *dialects.MissingTableError
// that carries the CREATE statement, and passes other errors through the
// builder's ClassifyError when it is a dialects.ErrorClassifier (a refused
// connection becomes a *dialects.ConnLimitError).
func (l *Locker) classify(err error) error {
	if err != nil && l.b.IsMissingTable(err) {
		return &dialects.MissingTableError{Table: l.schema.Table, CreateSQL: l.CreateSQL(), Err: err}
	}
	return dialects.Classify(l.b, err)
}

// Statements reports the SQL this Locker sends, by operation: acquire,
// refresh, release, expire, inspect, list, create and drop, and where the
// table has them release-delete, sweep, delete, name-column,
// until-precision and refresh-batch (as sent for two leases).
func (l *Locker) Statements() map[string]string {
	m := make(map[string]string, numOps+2)
	frame := l.frameNow()
	for o := range opNameColumn {
		if l.stmts[o].spec.SQL != "" {
			m[o.String()] = l.sqlFor(o, frame, l.wholeSeconds.Load())
		}
	}
	if ncb, ok := l.b.(NameColumnBuilder); ok {
		m[opNameColumn.String()] = ncb.NameColumn(l.schema)
	}
	if upb, ok := l.b.(UntilPrecisionBuilder); ok {
		m["until-precision"] = upb.UntilPrecision(l.schema)
	}
	if br, _ := l.batchRefresher(); br != nil {
		s := l.schema
		s.Zone, s.UntilWholeSeconds = frame, l.wholeSeconds.Load()
		m[opRefreshBatch.String()] = br.RefreshBatch(s, 2).SQL
	}
	m["create"] = l.CreateSQL()
	m["drop"] = l.dropSQL()
	return m
}

// Close releases the prepared statements and stops the deletion of rows
// that early releases kept (see RowDeleter): such a row stays, expired,
// until the next acquire of its name takes it over. Call it when no
// operation is in flight; a later operation prepares its statement again.
func (l *Locker) Close() error {
	l.closeOnce.Do(func() { close(l.closing) })
	l.sweeps.Wait()
	l.refreshes.Wait()
	var errs []error
	for o := range numOps {
		p := &l.stmts[o]
		p.mu.Lock()
		if s := p.stmt.Swap(nil); s != nil {
			errs = append(errs, s.stmt.Close())
		}
		p.mu.Unlock()
	}
	l.retiredMu.Lock()
	for _, s := range l.retired {
		errs = append(errs, s.Close())
	}
	l.retired = nil
	l.retiredMu.Unlock()
	return dialects.Wrap(l.b.Dialect(), "close", errors.Join(errs...))
}
