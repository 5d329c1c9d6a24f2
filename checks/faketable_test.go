package checks

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// fakeRow is one lease-table row.
type fakeRow struct {
	owner    string
	token    int64
	lockedAt time.Time
	until    time.Time
}

// fakeTable is a TableLocker over a fakeServer table, following the
// lease-table contract unless the server's faults say otherwise.
type fakeTable struct {
	server *fakeServer
	schema dialects.Schema
}

var (
	_ dialects.TableLocker  = (*fakeTable)(nil)
	_ dialects.TableDropper = (*fakeTable)(nil)
)

func (t *fakeTable) Strategy() dialects.Strategy { return dialects.StrategyTable }
func (t *fakeTable) Schema() dialects.Schema     { return t.schema }
func (t *fakeTable) CreateSQL() string           { return "(fake table " + t.schema.Table + ")" }
func (t *fakeTable) hasToken() bool              { return t.schema.TokenCol != "" }

func (t *fakeTable) CreateTable(context.Context) error {
	s := t.server
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tables[t.schema.Table] == nil {
		s.tables[t.schema.Table] = map[string]*fakeRow{}
	}
	return nil
}

func (t *fakeTable) DropTable(context.Context) error {
	s := t.server
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.tables, t.schema.Table)
	return nil
}

// rowsLocked returns the table's rows; s.mu is held.
func (t *fakeTable) rowsLocked() (map[string]*fakeRow, error) {
	rows := t.server.tables[t.schema.Table]
	if rows == nil {
		return nil, &dialects.MissingTableError{Table: t.schema.Table, CreateSQL: t.CreateSQL()}
	}
	return rows, nil
}

func (t *fakeTable) Inspect(_ context.Context, name string) (dialects.Row, bool, error) {
	if err := t.checkName(&name); err != nil {
		return dialects.Row{}, false, err
	}
	s := t.server
	s.mu.Lock()
	defer s.mu.Unlock()
	rows, err := t.rowsLocked()
	if err != nil {
		return dialects.Row{}, false, err
	}
	r := rows[s.key(name)]
	if r == nil {
		return dialects.Row{Name: name, DBNow: s.now()}, false, nil
	}
	return dialects.Row{Name: name, Owner: r.owner, Token: r.token, HasToken: t.hasToken(),
		LockedAt: r.lockedAt, Until: r.until, DBNow: s.now()}, true, nil
}

// Expire ends name's live lease, whoever holds it.
func (t *fakeTable) Expire(_ context.Context, name string) (bool, error) {
	if err := t.checkName(&name); err != nil {
		return false, err
	}
	s := t.server
	s.mu.Lock()
	defer s.mu.Unlock()
	rows, err := t.rowsLocked()
	if err != nil {
		return false, err
	}
	r := rows[s.key(name)]
	if r == nil || !r.until.After(s.now()) {
		return false, nil
	}
	r.until = s.now()
	return true, nil
}

// checkName refuses a bad name, or with the cutAtNUL fault lets it through
// cut at its first NUL byte.
func (t *fakeTable) checkName(name *string) error {
	if t.server.faults.cutAtNUL {
		*name, _, _ = strings.Cut(*name, "\x00")
		return nil
	}
	return dialects.CheckName(*name)
}

func (t *fakeTable) Acquire(ctx context.Context, name string, opts dialects.Options) (dialects.Lease, error) {
	if err := t.checkName(&name); err != nil {
		return nil, err
	}
	if t.server.faults.cutAtNUL && opts.Owner != "" {
		opts.Owner, _, _ = strings.Cut(opts.Owner, "\x00")
	}
	opts, err := opts.Normalize()
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(opts.Wait)
	for {
		lease, err := t.try(name, opts)
		if err == nil || !errors.Is(err, dialects.ErrHeld) || !time.Now().Add(opts.RetryEvery).Before(deadline) {
			return lease, err
		}
		if err := sleep(ctx, opts.RetryEvery); err != nil {
			return nil, err
		}
	}
}

func (t *fakeTable) try(name string, opts dialects.Options) (dialects.Lease, error) {
	s := t.server
	s.mu.Lock()
	defer s.mu.Unlock()
	rows, err := t.rowsLocked()
	if err != nil {
		return nil, err
	}
	before := time.Now()
	now := s.now()
	k := s.key(name)
	r := rows[k]
	if r != nil && r.until.After(now) && !s.faults.grantTwice {
		held := &dialects.HeldError{Name: name, Until: r.until}
		if !s.faults.noHolder {
			held.Holder = r.owner
		}
		return nil, held
	}
	token := int64(1)
	if r != nil && !s.faults.flatToken {
		token = r.token + 1
	}
	rows[k] = &fakeRow{owner: opts.Owner, token: token, lockedAt: now, until: now.Add(opts.AtMost)}
	l := t.newLease(name, opts.Owner, token, opts, false)
	l.mu.Lock()
	l.setUntilLocked(before.Add(opts.AtMost))
	l.mu.Unlock()
	return l, nil
}

func (t *fakeTable) Handle(name, owner string, token int64, opts dialects.Options) (dialects.Lease, error) {
	if err := dialects.CheckName(name); err != nil {
		return nil, err
	}
	opts.Owner = owner
	opts, err := opts.Normalize()
	if err != nil {
		return nil, err
	}
	return t.newLease(name, owner, token, opts, true), nil
}

func (t *fakeTable) newLease(name, owner string, token int64, opts dialects.Options, handle bool) *fakeLease {
	return &fakeLease{table: t, name: name, owner: owner, token: token, opts: opts, handle: handle, done: make(chan struct{})}
}

// fakeLease is one held (or handled) row.
type fakeLease struct {
	table  *fakeTable
	name   string
	owner  string
	token  int64
	opts   dialects.Options
	handle bool // made by Handle: refusals say ErrNotOwner when another owner holds the row

	mu       sync.Mutex
	until    time.Time
	timer    *time.Timer
	finished bool
	err      error
	done     chan struct{}
}

func (l *fakeLease) Name() string          { return l.name }
func (l *fakeLease) Owner() string         { return l.owner }
func (l *fakeLease) Done() <-chan struct{} { return l.done }

func (l *fakeLease) Token() (int64, bool) {
	if !l.table.hasToken() {
		return 0, false
	}
	return l.token, true
}

func (l *fakeLease) Until() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.until
}

func (l *fakeLease) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// setUntilLocked records the host-clock lease end and, unless the server
// loses leases silently, arms the timer that ends the lease there.
func (l *fakeLease) setUntilLocked(until time.Time) {
	l.until = until
	if l.table.server.faults.silentLoss {
		return
	}
	d := time.Until(until)
	if l.timer == nil {
		l.timer = time.AfterFunc(d, l.expire)
		return
	}
	l.timer.Reset(d)
}

func (l *fakeLease) expire() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.finished && !time.Now().Before(l.until) {
		l.endLocked(fmt.Errorf("%w: the lease expired", dialects.ErrLeaseLost))
	}
}

func (l *fakeLease) endLocked(err error) {
	if l.finished {
		return
	}
	l.finished = true
	l.err = err
	if l.timer != nil {
		l.timer.Stop()
	}
	close(l.done)
}

// match finds the lease's row when the lease still holds it; s.mu is held.
func (l *fakeLease) matchLocked(rows map[string]*fakeRow) (*fakeRow, error) {
	s := l.table.server
	r := rows[s.key(l.name)]
	live := r != nil && r.until.After(s.now())
	if live && (s.faults.anyOwner || (r.owner == l.owner && (l.token == 0 || !l.table.hasToken() || r.token == l.token))) {
		return r, nil
	}
	if l.handle && live && r.owner != l.owner {
		return nil, fmt.Errorf("%w: %q holds %q", dialects.ErrNotOwner, r.owner, l.name)
	}
	return nil, fmt.Errorf("%w: the lease of %q has ended", dialects.ErrLeaseLost, l.name)
}

// use runs op on the lease's row under both locks.
func (l *fakeLease) use(op func(r *fakeRow, now time.Time)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.finished {
		if l.err != nil {
			return l.err
		}
		return fmt.Errorf("%w: already released", dialects.ErrLeaseLost)
	}
	s := l.table.server
	s.mu.Lock()
	defer s.mu.Unlock()
	rows, err := l.table.rowsLocked()
	if err != nil {
		return err
	}
	r, err := l.matchLocked(rows)
	if err != nil {
		if errors.Is(err, dialects.ErrLeaseLost) && !l.handle {
			l.endLocked(err)
		}
		return err
	}
	op(r, s.now())
	return nil
}

func (l *fakeLease) Refresh(context.Context) error {
	before := time.Now()
	return l.use(func(r *fakeRow, now time.Time) {
		if !l.table.server.faults.refreshNoMove {
			r.until = now.Add(l.opts.AtMost)
		}
		l.setUntilLocked(before.Add(l.opts.AtMost))
	})
}

func (l *fakeLease) Release(context.Context) error {
	return l.use(func(r *fakeRow, now time.Time) {
		s := l.table.server
		r.until = now
		if keep := r.lockedAt.Add(l.opts.AtLeast); keep.After(now) && !s.faults.ignoreAtLeast {
			r.until = keep
		}
		if s.faults.releaseAnyName {
			for _, other := range s.tables[l.table.schema.Table] {
				other.until = now
			}
		}
		l.endLocked(nil)
	})
}
