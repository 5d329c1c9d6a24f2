package memory

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// Locker is the table-strategy locker on one table of a store. It
// implements dialects.LeaseLocker, dialects.TableCreator and
// dialects.TableDropper.
type Locker struct {
	store  *store
	schema dialects.Schema
}

var (
	_ dialects.LeaseLocker  = (*Locker)(nil)
	_ dialects.TableCreator = (*Locker)(nil)
	_ dialects.TableDropper = (*Locker)(nil)
)

// Strategy reports StrategyTable.
func (l *Locker) Strategy() dialects.Strategy { return dialects.StrategyTable }

// Schema implements dialects.TableLocker.
func (l *Locker) Schema() dialects.Schema { return l.schema }

// CreateTable creates the table when it does not exist.
func (l *Locker) CreateTable(context.Context) error {
	l.store.mu.Lock()
	defer l.store.mu.Unlock()
	if l.store.tables[l.schema.Table] == nil {
		l.store.tables[l.schema.Table] = &table{schema: l.schema, rows: map[string]*row{}}
	}
	return nil
}

// DropTable implements dialects.TableDropper; live leases on it end as lost.
func (l *Locker) DropTable(context.Context) error {
	l.store.mu.Lock()
	defer l.store.mu.Unlock()
	if t := l.store.tables[l.schema.Table]; t != nil {
		for _, r := range t.rows {
			if r.lease != nil {
				r.lease.endLocked(fmt.Errorf("%w: table %s was dropped", dialects.ErrLeaseLost, l.schema.Table))
			}
		}
	}
	delete(l.store.tables, l.schema.Table)
	return nil
}

// tableLocked returns the table, or a *MissingTableError. The store's
// mutex is held.
func (l *Locker) tableLocked() (*table, error) {
	t := l.store.tables[l.schema.Table]
	if t == nil {
		return nil, &dialects.MissingTableError{Table: l.schema.Table, CreateSQL: "(memory table " + l.schema.Table + ")"}
	}
	if _, err := t.as(l.schema.Table, l.schema.Preset); err != nil {
		return nil, err
	}
	return t, nil
}

// Acquire implements dialects.Locker: one try, or tries every
// opts.RetryEvery until opts.Wait has passed.
func (l *Locker) Acquire(ctx context.Context, name string, opts dialects.Options) (dialects.Lease, error) {
	if err := dialects.CheckName(name); err != nil {
		return nil, err
	}
	opts, err := opts.Normalize()
	if err != nil {
		return nil, err
	}
	lease, err := dialects.RetryAcquire(ctx, opts, func() (dialects.Lease, error) { return l.try(name, opts) }, nil)
	return lease, dialects.Wrap(Name, "acquire", err)
}

func (l *Locker) try(name string, opts dialects.Options) (dialects.Lease, error) {
	l.store.mu.Lock()
	defer l.store.mu.Unlock()
	t, err := l.tableLocked()
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	r := t.rows[name]
	if r == nil {
		r = &row{}
		t.rows[name] = r
	}
	if r.owner != "" && r.until.After(now) {
		return nil, &dialects.HeldError{Name: name, Holder: r.owner, Until: r.until}
	}
	if r.lease != nil {
		r.lease.endLocked(fmt.Errorf("%w: the lease of %q ran out and %s took the lock", dialects.ErrLeaseLost, name, opts.Owner))
	}
	r.owner, r.token, r.lockedAt, r.until = opts.Owner, r.token+1, now, now.Add(opts.AtMost)
	s := &lease{locker: l, name: name, owner: opts.Owner, token: r.token, atMost: opts.AtMost, atLeast: opts.AtLeast, until: r.until, done: make(chan struct{})}
	r.lease = s
	s.timer = time.AfterFunc(opts.AtMost, s.expire)
	return s, nil
}

// Inspect implements dialects.TableLocker.
func (l *Locker) Inspect(_ context.Context, name string) (dialects.Row, bool, error) {
	if err := dialects.CheckName(name); err != nil {
		return dialects.Row{}, false, err
	}
	l.store.mu.Lock()
	defer l.store.mu.Unlock()
	t, err := l.tableLocked()
	if err != nil {
		return dialects.Row{}, false, err
	}
	now := time.Now().UTC()
	r := t.rows[name]
	if r == nil || r.token == 0 {
		return dialects.Row{}, false, nil
	}
	hasToken := l.schema.TokenCol != ""
	token := r.token
	if !hasToken {
		token = 0
	}
	return dialects.Row{Name: name, Owner: r.owner, Token: token, HasToken: hasToken, LockedAt: r.lockedAt, Until: r.until, DBNow: now}, true, nil
}

// Handle implements dialects.TableLocker: a lease of owner's that only
// refreshes and releases, under the owner (and token) check.
func (l *Locker) Handle(name, owner string, token int64, opts dialects.Options) (dialects.Lease, error) {
	opts, err := dialects.HandleOptions(name, owner, token, opts)
	if err != nil {
		return nil, err
	}
	return &lease{locker: l, name: name, owner: owner, token: token, atMost: opts.AtMost, atLeast: opts.AtLeast, done: make(chan struct{}), handle: true}, nil
}

// Expire implements dialects.LeaseLocker: it ends name's lease whoever
// holds it.
func (l *Locker) Expire(_ context.Context, name string) (bool, error) {
	if err := dialects.CheckName(name); err != nil {
		return false, err
	}
	l.store.mu.Lock()
	defer l.store.mu.Unlock()
	t, err := l.tableLocked()
	if err != nil {
		return false, err
	}
	now := time.Now().UTC()
	r := t.rows[name]
	if r == nil || r.owner == "" || !r.until.After(now) {
		return false, nil
	}
	r.until = now
	if r.lease != nil {
		r.lease.endLocked(fmt.Errorf("%w: lock %q was force-released", dialects.ErrLeaseLost, name))
	}
	return true, nil
}

// lease is one acquire's lease, or a Handle (which has no timer and is
// never told of a loss: it learns of it on its next call).
type lease struct {
	locker          *Locker
	name, owner     string
	token           int64
	atMost, atLeast time.Duration
	handle          bool

	// Guarded by the store's mutex.
	until time.Time
	timer *time.Timer
	ended bool

	errMu sync.Mutex
	err   error
	done  chan struct{}
}

func (s *lease) Name() string  { return s.name }
func (s *lease) Owner() string { return s.owner }

// Token reports the fencing token where the table's layout has a token
// column (the schedlock preset); tokens are kept either way.
func (s *lease) Token() (int64, bool) {
	if s.locker.schema.TokenCol == "" {
		return 0, false
	}
	return s.token, s.token != 0
}
func (s *lease) Done() <-chan struct{} { return s.done }

func (s *lease) Until() time.Time {
	s.locker.store.mu.Lock()
	defer s.locker.store.mu.Unlock()
	return s.until
}

func (s *lease) Err() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	return s.err
}

// endLocked ends the lease with err (nil: a clean release). The store's
// mutex is held.
func (s *lease) endLocked(err error) {
	if s.ended {
		return
	}
	s.ended = true
	if s.timer != nil {
		s.timer.Stop()
	}
	if r := s.rowLocked(); r != nil && r.lease == s {
		r.lease = nil
	}
	s.errMu.Lock()
	s.err = err
	s.errMu.Unlock()
	close(s.done)
}

func (s *lease) rowLocked() *row {
	t := s.locker.store.tables[s.locker.schema.Table]
	if t == nil {
		return nil
	}
	return t.rows[s.name]
}

// expire ends a lease that ran out unrefreshed.
func (s *lease) expire() {
	s.locker.store.mu.Lock()
	defer s.locker.store.mu.Unlock()
	if r := s.rowLocked(); r != nil && r.lease == s && r.until.After(time.Now()) {
		return // refreshed while the timer fired
	}
	s.endLocked(fmt.Errorf("%w: the lease of %q ran out (at-most %s)", dialects.ErrLeaseLost, s.name, s.atMost))
}

// ownedLocked checks that the row is still this lease's: the same owner
// (and token, unless 0), within its lease. The store's mutex is held.
func (s *lease) ownedLocked(op string) (*row, error) {
	lost := func(why string) error {
		err := fmt.Errorf("%w: %s of %q: %s", dialects.ErrLeaseLost, op, s.name, why)
		s.endLocked(err)
		return err
	}
	if s.ended && !s.handle {
		return nil, fmt.Errorf("%w: %s of %q after the lease ended", dialects.ErrLeaseLost, op, s.name)
	}
	t, err := s.locker.tableLocked()
	if err != nil {
		return nil, err
	}
	r := t.rows[s.name]
	now := time.Now().UTC()
	switch {
	case r == nil || r.owner == "":
		return nil, lost("the lock is free")
	case r.owner != s.owner:
		return nil, fmt.Errorf("%w: %s of %q: held by %s", dialects.ErrNotOwner, op, s.name, r.owner)
	case s.token != 0 && r.token != s.token:
		return nil, lost(fmt.Sprintf("acquired again (token %d, this lease had %d)", r.token, s.token))
	case !r.until.After(now):
		return nil, lost("the lease ran out")
	}
	return r, nil
}

// Refresh implements dialects.Lease: the lease ends AtMost from now.
func (s *lease) Refresh(context.Context) error {
	s.locker.store.mu.Lock()
	defer s.locker.store.mu.Unlock()
	r, err := s.ownedLocked("refresh")
	if err != nil {
		return dialects.Wrap(Name, "refresh", err)
	}
	r.until = time.Now().UTC().Add(s.atMost)
	s.until = r.until
	if s.timer != nil {
		s.timer.Reset(s.atMost)
	}
	return nil
}

// Release implements dialects.Lease: the lock stays taken until locked-at
// plus AtLeast, then is free.
func (s *lease) Release(context.Context) error {
	s.locker.store.mu.Lock()
	defer s.locker.store.mu.Unlock()
	r, err := s.ownedLocked("release")
	if err != nil {
		return dialects.Wrap(Name, "release", err)
	}
	now := time.Now().UTC()
	if keep := r.lockedAt.Add(s.atLeast); keep.After(now) {
		r.until = keep
	} else {
		r.owner, r.until = "", now
	}
	if r.lease != nil && r.lease != s {
		r.lease.endLocked(nil) // released through a Handle of the same owner
	}
	s.endLocked(nil)
	return nil
}
