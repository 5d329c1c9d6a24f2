package redis

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// lease is one lock held as a Redis key, from Acquire or Handle.
//
// Its end (dialects.LeaseEnd) is Until: the host time before the acquire
// or refresh was sent, plus at-most, never later than the key's expiry on
// the server; the lease is lost then, so a holder that cannot reach Redis
// stops before anyone else can take the lock.
type lease struct {
	dialects.LeaseEnd

	locker *Locker
	name   string
	keys   []string // the lock key; a native Handle's counter too (lockKeys)
	owner  string
	token  int64 // native: the fencing token (0 on a Handle: not compared)
	// ident is what the key holds for this lease's acquire alone: on the
	// native layout the value after its span (" <nonce> <owner>"), on the
	// shedlock layout the whole value; "" on a Handle.
	ident   string
	atMost  time.Duration
	atLeast time.Duration
	handle  bool
	// lockedAtMS is the server time of a ShedLock-layout acquire (0 on a
	// Handle and on the native layout, whose value keeps it).
	lockedAtMS int64

	opMu sync.Mutex // serialises Refresh and Release
}

var _ dialects.RefreshFailure = (*lease)(nil)

// newLease is the lease of name under keys (the scripts' KEYS), ending
// at until unless refreshed.
func (l *Locker) newLease(name string, keys []string, opts dialects.Options, handle bool, until time.Time) *lease {
	s := &lease{locker: l, name: name, keys: keys, owner: opts.Owner,
		atMost: opts.AtMost, atLeast: opts.AtLeast, handle: handle}
	s.Start(until, dialects.ExpiredLease(Name, name))
	return s
}

func (s *lease) Name() string  { return s.name }
func (s *lease) Owner() string { return s.owner }

// Token returns the fencing token of the native layout; the shedlock
// layout has none.
func (s *lease) Token() (int64, bool) {
	if !s.locker.layout.native || s.token == 0 {
		return 0, false
	}
	return s.token, true
}

// Refresh implements dialects.Lease: one script run that checks the key
// still holds this lease's acquire (a Handle: the owner, and the token
// if it has one) and sets its expiry to at-most from the server's now,
// keeping its locked-at.
func (s *lease) Refresh(ctx context.Context) error {
	s.opMu.Lock()
	if err := s.endedErr("refresh"); err != nil {
		s.opMu.Unlock()
		return err
	}
	it := s.locker.refreshes.q.Add(s.refreshCall())
	select {
	case r := <-it.Outcome():
		defer s.opMu.Unlock()
		return s.refreshed(r)
	case <-ctx.Done():
	}
	err := s.RefreshFailed(dialects.Wrap(Name, "refresh", ctx.Err()))
	if it.Withdraw() {
		s.opMu.Unlock()
		return err
	}
	// A pipeline in flight holds the refresh and may extend the key: the
	// lease stays locked until its answer, so that no Release is
	// overtaken by it.
	go func() {
		defer s.opMu.Unlock()
		_ = s.refreshed(<-it.Outcome())
	}()
	return err
}

// refreshed finishes a refresh from its script run's answer.
func (s *lease) refreshed(r refreshReply) error {
	if r.err != nil {
		return s.RefreshFailed(dialects.Wrap(Name, "refresh", s.locker.explain(r.err)))
	}
	if err := s.judge("refresh", r.res); err != nil {
		return err
	}
	return s.Extend(leaseEnd(r.start, s.atMost))
}

// Release implements dialects.Lease: one script run that checks the key
// as Refresh does and deletes it, or shortens its expiry to what at-least
// still needs (locked-at + at-least, on the server's clock).
func (s *lease) Release(ctx context.Context) error {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	if err := s.endedErr("release"); err != nil {
		return err
	}
	var res any
	var err error
	b, keys, atLeast := s.locker.b, s.keys, s.atLeast.Milliseconds()
	switch {
	case s.locker.layout.native && s.ident != "":
		res, err = b.runScript(ctx, releaseValue, keys, s.ident, atLeast)
	case s.locker.layout.native:
		res, err = b.runScript(ctx, releaseNative, keys, s.owner, strconv.FormatInt(s.token, 10), atLeast)
	default:
		keepUntil, kerr := s.atLeastEnd(ctx)
		if kerr != nil {
			return dialects.Wrap(Name, "release", kerr)
		}
		if s.ident != "" {
			res, err = b.runScript(ctx, releaseExact, keys, s.ident, keepUntil)
		} else {
			res, err = b.runScript(ctx, releaseShedlock, keys, s.owner, keepUntil)
		}
	}
	if err != nil {
		return dialects.Wrap(Name, "release", s.locker.explain(err))
	}
	if err := s.judge("release", res); err != nil {
		return err
	}
	return s.End(nil)
}

// abandon releases a lease its acquire took as ctx ended, at-least not
// kept (the job never ran), and returns the acquire's error.
func (s *lease) abandon(ctx context.Context, cause error) error {
	s.atLeast = 0
	return dialects.Abandon(ctx, cause, s.Release)
}

// atLeastEnd is the server time (ms) until which a ShedLock-layout
// release keeps the lock: locked-at + at-least, with locked-at from the
// acquire, or for a Handle from the value's instant; 0 without at-least.
func (s *lease) atLeastEnd(ctx context.Context) (int64, error) {
	if s.atLeast <= 0 {
		return 0, nil
	}
	if s.lockedAtMS == 0 {
		row, _, err := s.locker.inspectKey(ctx, s.name)
		if err != nil {
			return 0, err
		}
		if row.LockedAt.IsZero() {
			return 0, nil
		}
		return row.LockedAt.UnixMilli() + s.atLeast.Milliseconds(), nil
	}
	return s.lockedAtMS + s.atLeast.Milliseconds(), nil
}

// judge reads a refresh or release reply: 1 done; else {0, the value
// found (nil: no key)}, the refusal, which ends the lease as lost
// (another owner on a Handle is ErrNotOwner and leaves it open).
func (s *lease) judge(op string, res any) error {
	if n, ok := res.(int64); ok && n == 1 {
		return nil
	}
	r, ok := res.([]any)
	if !ok || len(r) != 2 || asInt(r[0]) != 0 {
		return dialects.Wrap(Name, op, fmt.Errorf("unexpected reply of the %s script: %v", op, res))
	}
	if r[1] == nil {
		return s.lose(op, fmt.Sprintf("the key of lock %q is gone: its lease expired, it was deleted, or the server lost its data (a restart without persistence, a failover)", s.name))
	}
	found := asString(r[1])
	if holder := holderOf(s.locker.layout, found); holder != s.owner {
		if s.handle {
			return dialects.Wrap(Name, op, fmt.Errorf("%w: lock %q is held by %s, not %s", dialects.ErrNotOwner, s.name, holder, s.owner))
		}
		return s.lose(op, fmt.Sprintf("lock %q was taken over by %s", s.name, holder))
	}
	if v := parseNativeValue(found); s.locker.layout.native && v.ok && !v.spanForm {
		return s.lose(op, fmt.Sprintf("lock %q was acquired again (token %d, this lease has %d)", s.name, v.token, s.token))
	}
	return s.lose(op, fmt.Sprintf("lock %q was acquired again by the same owner", s.name))
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
	return dialects.Wrap(Name, op, fmt.Errorf("%w: lock %q was already released", dialects.ErrLeaseLost, s.name))
}

// lose ends the lease as lost and returns its error.
func (s *lease) lose(op, why string) error {
	return s.End(dialects.Wrap(Name, op, fmt.Errorf("%w: %s", dialects.ErrLeaseLost, why)))
}
