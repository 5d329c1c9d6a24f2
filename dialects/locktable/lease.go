package locktable

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// lease is one lock held in a lease table, from Acquire or Handle.
//
// Its end (dialects.LeaseEnd) is Until, the host time before the acquire
// or refresh was sent plus at-most: the lease is lost then, so a holder
// never believes it holds the lock past its lease. Refresh moves Until.
type lease struct {
	dialects.LeaseEnd

	locker   *Locker
	name     string // as the caller gave it
	stored   string // after MapName
	owner    string
	token    int64 // 0: unknown, not compared
	hasToken bool
	atMost   time.Duration
	atLeast  time.Duration
	handle   bool // from Handle: another owner's row is ErrNotOwner, not a loss
	// lockedAt is the host time before the acquire was sent (zero for a
	// Handle): at-least counts from it where a kept row is swept.
	lockedAt time.Time

	sweptMu   sync.Mutex
	swept     chan struct{} // see Freed; closed unless a row deletion is pending
	lostSwept sync.Once     // a lost lease's row is swept once

	opMu sync.Mutex // serialises Refresh and Release; held across their statements
	seq  uint64     // the Locker's number for this lease (RefreshAll's lock order)
}

func (l *Locker) newLease(name, stored, owner string, token int64, opts dialects.Options, handle bool) *lease {
	s := &lease{
		locker:   l,
		name:     name,
		stored:   stored,
		owner:    owner,
		token:    token,
		hasToken: l.schema.TokenCol != "",
		atMost:   opts.AtMost,
		atLeast:  opts.AtLeast,
		handle:   handle,
		swept:    closedChan,
		seq:      l.leaseSeq.Add(1),
	}
	return s
}

// start begins the lease's clock: it ends at until unless refreshed.
func (s *lease) start(until time.Time) {
	s.Start(until, dialects.ExpiredLease(s.dialect(), s.name))
}

func (s *lease) Name() string  { return s.name }
func (s *lease) Owner() string { return s.owner }

// Token returns the fencing token, or false when the schema has no token
// column or the token is unknown (a Handle given token 0).
func (s *lease) Token() (int64, bool) {
	if !s.hasToken || s.token == 0 {
		return 0, false
	}
	return s.token, true
}

// refreshCause is err as a failed refresh reports it: a lock table that
// has gone since the lock was taken is said in the database's own words
// (`relation "schedlock" does not exist`), not as the remedy that creates
// a missing table.
func refreshCause(err error) error {
	var missing *dialects.MissingTableError
	if errors.As(err, &missing) && missing.Err != nil {
		return fmt.Errorf("lock table %s is gone: %w", missing.Table, missing.Err)
	}
	return err
}

func (s *lease) binding() binding {
	return binding{name: s.stored, owner: s.owner, token: s.token, atMost: s.atMost, atLeast: s.locker.storedAtLeast(s.atLeast)}
}

func (s *lease) dialect() string { return s.locker.b.Dialect() }

// Refresh extends the lease to the database's now + AtMost; the new
// Until is the host time before the statement was sent + AtMost. Where the
// builder is a BatchRefresher, refreshes of one owner that arrive together
// (while another is in flight, or within RefreshWindow of it) share one
// statement; a lone one is sent at once, with the builder's Refresh.
func (s *lease) Refresh(ctx context.Context) error {
	s.opMu.Lock()
	if err := s.endedErr("refresh"); err != nil {
		s.opMu.Unlock()
		return err
	}
	if !s.locker.batchable(s) {
		defer s.opMu.Unlock()
		return s.renewed(ctx, s.locker.renew(ctx, []*lease{s})[0])
	}
	deadline, _ := ctx.Deadline()
	it := s.locker.refreshes.Add(refreshReq{lease: s, deadline: deadline})
	select {
	case r := <-it.Outcome():
		defer s.opMu.Unlock()
		return s.renewed(ctx, r)
	case <-ctx.Done():
	}
	err := s.RefreshFailed(dialects.Wrap(s.dialect(), "refresh", ctx.Err()))
	if it.Withdraw() {
		s.opMu.Unlock()
		return err
	}
	// A statement in flight holds the refresh and may renew the row: the
	// lease stays locked until its answer, so that no Release is
	// overtaken by it.
	go func() {
		defer s.opMu.Unlock()
		if r := <-it.Outcome(); r.err == nil && r.renewed {
			_ = s.Extend(r.start.Add(s.atMost))
		}
	}()
	return err
}

// renewed finishes a refresh from what its statement said: the new
// Until, the database's error, or why the row was not renewed. When a
// batch's row count fell short, the lease's row tells whether it was: it
// was when it is still this lease's and running.
func (s *lease) renewed(ctx context.Context, r renewal) error {
	switch {
	case r.err != nil:
		return s.RefreshFailed(dialects.Wrap(s.dialect(), "refresh", refreshCause(r.err)))
	case r.renewed:
		// If the lease ended while the statement was in flight, the
		// holder has been told, so the loss stands.
		return s.Extend(r.start.Add(s.atMost))
	case r.exact:
		return s.explain(ctx, "refresh")
	}
	row, found, err := s.locker.inspectStored(ctx, s.stored)
	if err == nil && found && row.Owner == s.owner && (!s.hasToken || row.Token == s.token) && !row.Expired() {
		return s.Extend(r.start.Add(s.atMost))
	}
	return s.explainRow(ctx, "refresh", row, found, err)
}

// Release gives the lock up with one statement, keeping it until
// locked-at + AtLeast when that is later than now. On a table whose
// release deletes the row (sys_sched_lock) it deletes the row, or keeps it
// until locked-at + AtLeast and deletes it then (see releaseDeleting).
func (s *lease) Release(ctx context.Context) error {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	if err := s.endedErr("release"); err != nil {
		if s.locker.deletesRows() && errors.Is(err, dialects.ErrLeaseLost) {
			s.sweepLost()
		}
		return err
	}
	if s.locker.deletesRows() {
		return s.releaseDeleting(ctx)
	}
	_, done, err := s.locker.exec(ctx, opRelease, s.binding())
	if err != nil {
		return dialects.Wrap(s.dialect(), "release", err)
	}
	if !done {
		return s.explain(ctx, "release")
	}
	return s.End(nil)
}

// abandon releases a lease its acquire took as ctx ended, at-least not
// kept (the job never ran), and returns the acquire's error.
func (s *lease) abandon(ctx context.Context, cause error) error {
	s.atLeast = 0
	return dialects.Abandon(ctx, cause, s.Release)
}

// endedErr is the error for an operation on a finished lease, or nil.
func (s *lease) endedErr(op string) error {
	ended, err := s.Ended()
	switch {
	case !ended:
		return nil
	case err != nil:
		return err
	}
	return dialects.Wrap(s.dialect(), op, fmt.Errorf("%w: lock %q was already released", dialects.ErrLeaseLost, s.name))
}

// explain reads the row after a refresh or release changed nothing and
// says why: another owner (ErrNotOwner for a Handle, a takeover otherwise),
// another token, an expired lease or a missing row. Only ErrNotOwner leaves
// the lease open.
func (s *lease) explain(ctx context.Context, op string) error {
	row, found, err := s.locker.inspectStored(ctx, s.stored)
	return s.explainRow(ctx, op, row, found, err)
}

// explainRow is explain with the row already read.
func (s *lease) explainRow(ctx context.Context, op string, row dialects.Row, found bool, err error) error {
	switch {
	case err != nil && op == "refresh":
		return s.RefreshFailed(dialects.Wrap(s.dialect(), op, fmt.Errorf("the %s changed no row, and reading the row failed: %w", op, err)))
	case err != nil:
		return dialects.Wrap(s.dialect(), op, fmt.Errorf("the %s changed no row, and reading the row failed: %w", op, err))
	case !found:
		return s.lose(op, fmt.Sprintf("the row of lock %q is gone", s.name))
	case row.Owner != s.owner && s.handle:
		state := "held"
		if row.Expired() {
			state = "last held"
		}
		return dialects.Wrap(s.dialect(), op, fmt.Errorf("%w: lock %q is %s by %s, not %s", dialects.ErrNotOwner, s.name, state, row.Owner, s.owner))
	case row.Owner != s.owner:
		return s.lose(op, fmt.Sprintf("lock %q was taken over by %s", s.name, row.Owner))
	case s.hasToken && s.token != 0 && row.Token != s.token:
		return s.lose(op, fmt.Sprintf("lock %q was acquired again (token %d, this lease has %d)", s.name, row.Token, s.token))
	default:
		if s.locker.deletesRows() {
			// Nobody took the expired row over: delete it, so that an
			// application that locks by INSERT is not refused by it.
			s.deleteExpiredOwn(ctx)
		}
		return s.lose(op, fmt.Sprintf("lease of lock %q expired at %s", s.name, dialects.FormatTime(row.Until)))
	}
}

// lose ends the lease as lost and returns its error.
func (s *lease) lose(op, why string) error {
	return s.End(dialects.Wrap(s.dialect(), op, fmt.Errorf("%w: %s", dialects.ErrLeaseLost, why)))
}
