package checks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// Env is what one check runs with: the database, names unique to the run,
// the run's lockers, and cleanup that undoes whatever the check leaves
// behind. A fresh Env is made for every check; the lockers and tables are
// shared by the whole run.
type Env struct {
	// Backend is the database under test.
	Backend dialects.Backend
	// Prefix starts every lock and table name of the run.
	Prefix string

	run *runState

	mu       sync.Mutex
	deferred []func(context.Context) error // guarded by mu
	finished bool                          // guarded by mu: the check's cleanup ran
}

// runState is shared by every check of one run.
type runState struct {
	backend dialects.Backend
	prefix  string
	// namespace is Config.Namespace.
	namespace string
	// allowRisks is Config.AllowRisks.
	allowRisks []string
	// oneRune is the name used by the one-character name check, drawn at
	// random per run so concurrent runs on one server do not collide.
	oneRune rune
	seq     atomic.Int64

	capsOnce sync.Once
	caps     dialects.Capabilities
	capsErr  error

	mu         sync.Mutex
	session    dialects.Locker
	sessionErr error
	tables     map[dialects.Table]*tableState
	tableOrder []dialects.Table
}

type tableState struct {
	locker  dialects.LeaseLocker
	ready   bool // the table is known to exist
	created bool // this run created it, so this run drops it
}

func newRunState(cfg Config) *runState {
	return &runState{backend: cfg.Backend, prefix: cfg.Prefix, namespace: cfg.Namespace, allowRisks: cfg.AllowRisks,
		oneRune: randomRune(), tables: map[dialects.Table]*tableState{}}
}

func (rs *runState) env() *Env { return &Env{Backend: rs.backend, Prefix: rs.prefix, run: rs} }

// Name returns a lock name unique to this call within the run (and, through
// the run's random prefix, across runs): "<prefix>-<n>-<suffix>", in the
// run's namespace when it has one ("staging::<prefix>-<n>-<suffix>").
func (e *Env) Name(suffix string) string {
	return dialects.NamespacedName(e.run.namespace, fmt.Sprintf("%s-%d-%s", e.Prefix, e.run.seq.Add(1), suffix))
}

// Owner returns a holder identity for role (e.g. "A", "intruder"), unique
// to this call within the run.
func (e *Env) Owner(role string) string {
	return fmt.Sprintf("%s:%s:%d", e.Prefix, role, e.run.seq.Add(1))
}

// Locker returns the run's locker for strategy; t is the lock table for the
// table strategy (its table is created if missing, see TableLocker).
func (e *Env) Locker(ctx context.Context, strategy dialects.Strategy, t dialects.Table) (dialects.Locker, error) {
	switch strategy {
	case dialects.StrategySession:
		return e.SessionLocker()
	case dialects.StrategyTable:
		return e.TableLocker(ctx, t)
	default:
		return nil, dialects.Invalidf("unknown strategy %q", strategy)
	}
}

// SessionLocker returns the run's session-strategy locker.
func (e *Env) SessionLocker() (dialects.Locker, error) {
	rs := e.run
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.session == nil && rs.sessionErr == nil {
		rs.session, rs.sessionErr = rs.backend.Locker(dialects.StrategySession, dialects.Table{})
	}
	return rs.session, rs.sessionErr
}

// TableLocker returns the run's locker on table t. The first call of a run
// creates the table when it does not exist and remembers to drop it when
// the run ends; a table that existed before is never dropped.
func (e *Env) TableLocker(ctx context.Context, t dialects.Table) (dialects.LeaseLocker, error) {
	rs := e.run
	rs.mu.Lock()
	defer rs.mu.Unlock()
	ts := rs.tables[t]
	if ts == nil {
		l, err := tableLocker(rs.backend, t)
		if err != nil {
			return nil, err
		}
		ts = &tableState{locker: l}
		rs.tables[t] = ts
		rs.tableOrder = append(rs.tableOrder, t)
	}
	if !ts.ready {
		_, _, err := ts.locker.Inspect(ctx, rs.prefix+"-probe")
		switch {
		case errors.Is(err, dialects.ErrNoTable):
			// A store whose keys need no container (Redis, etcd) makes
			// them on the first acquire.
			if c, ok := ts.locker.(dialects.TableCreator); ok {
				if err := c.CreateTable(ctx); err != nil {
					return nil, fmt.Errorf("create lock table %s: %w", ts.locker.Schema().Table, err)
				}
				ts.created = true
			}
		case err != nil:
			return nil, fmt.Errorf("read lock table %s: %w", ts.locker.Schema().Table, err)
		}
		ts.ready = true
	}
	return ts.locker, nil
}

// Defer registers fn to run when the check ends, latest first, with a
// context that outlives the check's own. A check that was left running
// after its time was up (its cleanup has run) runs fn at once.
func (e *Env) Defer(fn func(ctx context.Context) error) {
	e.mu.Lock()
	if !e.finished {
		e.deferred = append(e.deferred, fn)
		e.mu.Unlock()
		return
	}
	e.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	_ = fn(ctx)
}

// Track registers lease to be released when the check ends unless it has
// ended by then. It returns lease, so calls can be chained.
func (e *Env) Track(lease dialects.Lease) dialects.Lease {
	if lease == nil {
		return nil
	}
	e.Defer(func(ctx context.Context) error {
		if isClosed(lease.Done()) {
			return nil
		}
		if err := lease.Release(ctx); err != nil && !errors.Is(err, dialects.ErrLeaseLost) {
			return fmt.Errorf("release %q: %w", lease.Name(), err)
		}
		return nil
	})
	return lease
}

// Acquire acquires name on l and tracks the lease (see Track).
func (e *Env) Acquire(ctx context.Context, l dialects.Locker, name string, opts dialects.Options) (dialects.Lease, error) {
	lease, err := l.Acquire(ctx, name, opts)
	if err != nil {
		return nil, err
	}
	return e.Track(lease), nil
}

// finish runs the deferred functions, latest first, and joins their
// errors; later Defer calls run at once. It returns when ctx ends even if
// a function ignores it, saying so; that function is left running.
func (e *Env) finish(ctx context.Context) error {
	e.mu.Lock()
	fns := e.deferred
	e.deferred, e.finished = nil, true
	e.mu.Unlock()
	done := make(chan error, 1)
	go func() {
		var errs []error
		for i := len(fns) - 1; i >= 0; i-- {
			errs = append(errs, fns[i](ctx))
		}
		done <- errors.Join(errs...)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	t := time.NewTimer(maxGrace)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return fmt.Errorf("%w (%w)", errAbandoned, ctx.Err())
	}
}

// tableLocker returns b's table-strategy locker on t with the lease-table
// administration the checks need (dialects.LeaseLocker).
func tableLocker(b dialects.Backend, t dialects.Table) (dialects.LeaseLocker, error) {
	l, err := b.Locker(dialects.StrategyTable, t)
	if err != nil {
		return nil, err
	}
	tl, ok := l.(dialects.LeaseLocker)
	if !ok {
		return nil, fmt.Errorf("%w: the table locker of %s is a %T, without Inspect, Handle and Expire", dialects.ErrUnsupported, b.Detected().Dialect, l)
	}
	return tl, nil
}
