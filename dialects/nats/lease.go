package nats

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// lease is one acquire's lease, or a Handle (no timer; rev 0: it reads
// the key before each write).
//
// Its end (dialects.LeaseEnd) is at-most from the host time before the
// acquire or the last refresh was sent; an acquire's lease ends then,
// unrefreshed, and whichever way it ends the backend forgets it.
type lease struct {
	dialects.LeaseEnd

	l               *Locker
	name, key       string
	owner           string
	token           uint64
	lockedAt        time.Time
	atMost, atLeast time.Duration
	handle          bool

	mu  sync.Mutex // serialises Refresh and Release
	rev uint64     // the revision of our last write
}

// newLease is a lease ending at until unless refreshed (zero on a
// Handle: never), forgotten by the backend when it ends.
func (l *Locker) newLease(s *lease, until time.Time) *lease {
	s.l = l
	s.Start(until, func(time.Time, error) error {
		return fmt.Errorf("%w: the lease of %q ran out (at-most %s)", dialects.ErrLeaseLost, s.name, s.atMost)
	})
	s.OnEnd(func() { l.b.leases.Untrack(s) })
	return s
}

func (s *lease) Name() string  { return s.name }
func (s *lease) Owner() string { return s.owner }

// Token is the KV revision of the acquire write.
func (s *lease) Token() (int64, bool) { return int64(s.token), s.token != 0 }

// current reads the key and checks it is still this lease's: the
// revision to write under, and the value. A lease from Acquire also
// checks its last revision.
func (s *lease) current(ctx context.Context, kv ops, op string) (state, error) {
	lost := func(why string) error {
		err := fmt.Errorf("%w: %s of %q: %s", dialects.ErrLeaseLost, op, s.name, why)
		if !s.handle {
			s.End(err)
		}
		return err
	}
	cur, err := kv.get(ctx, s.key)
	if absent(err) {
		return state{}, lost("the lock is free")
	}
	if errors.Is(err, errForeign) {
		return state{}, lost(err.Error())
	}
	if err != nil {
		return state{}, netErr("read", err)
	}
	switch {
	case cur.v.Owner != s.owner:
		return state{}, fmt.Errorf("%w: %s of %q: held by %s", dialects.ErrNotOwner, op, s.name, cur.v.Owner)
	case s.token != 0 && cur.token != s.token:
		return state{}, lost(fmt.Sprintf("acquired again (token %d, this lease had %d)", cur.token, s.token))
	case !cur.until.After(time.Now()):
		return state{}, lost("the lease ran out")
	}
	return cur, nil
}

// afterEnd is the error of a call on a lease that has ended.
func (s *lease) afterEnd(op string) error {
	return fmt.Errorf("%w: %s of %q after the lease ended", dialects.ErrLeaseLost, op, s.name)
}

// Refresh implements dialects.Lease: Update guarded by our revision.
func (s *lease) Refresh(ctx context.Context) error {
	err := s.refresh(ctx)
	return dialects.Wrap(Name, "refresh", err)
}

func (s *lease) refresh(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ended, _ := s.Ended(); ended && !s.handle { // an expiry due on this host's clock included
		return s.afterEnd("refresh")
	}
	kv, err := s.l.store(ctx)
	if err != nil {
		return err
	}
	rev, cur := s.rev, state{}
	if s.handle {
		if cur, err = s.current(ctx, kv, "refresh"); err != nil {
			return err
		}
		rev = cur.revision
	} else {
		cur.v = value{Owner: s.owner, LockedAt: s.lockedAt.UnixMilli()}
	}
	start := time.Now()
	v := value{Owner: s.owner, LockedAt: cur.v.LockedAt, LeaseMS: s.atMost.Milliseconds(), Token: s.token}
	if s.token == 0 { // a handle without a token keeps the one stored
		v.Token = cur.token
	}
	nrev, err := kv.update(ctx, s.key, v, rev)
	for try := 0; try < 3 && conflict(err); try++ {
		// Rewritten since our last write: still ours (a Handle of the
		// same owner refreshed it) is written again under the new revision.
		if cur, err = s.current(ctx, kv, "refresh"); err != nil {
			return err
		}
		nrev, err = kv.update(ctx, s.key, v, cur.revision)
	}
	if err != nil {
		return netErr("update", err)
	}
	s.rev = nrev
	// A lease that ended while the update was on its way stays ended.
	_ = s.Extend(start.Add(s.atMost))
	return nil
}

// Release implements dialects.Lease: Delete guarded by our revision, or
// an Update keeping the key until locked-at plus at-least.
func (s *lease) Release(ctx context.Context) error {
	return dialects.Wrap(Name, "release", s.release(ctx))
}

func (s *lease) release(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ended, _ := s.Ended(); ended && !s.handle { // an expiry due on this host's clock included
		return s.afterEnd("release")
	}
	kv, err := s.l.store(ctx)
	if err != nil {
		return err
	}
	rev := s.rev
	lockedAt := s.lockedAt
	token := s.token
	if s.handle {
		cur, err := s.current(ctx, kv, "release")
		if err != nil {
			return err
		}
		rev, lockedAt, token = cur.revision, time.UnixMilli(cur.v.LockedAt), cur.token
	}
	write := func(rev uint64) error {
		if keep := time.Until(lockedAt.Add(s.atLeast)); keep > 0 {
			v := value{Owner: s.owner, LockedAt: lockedAt.UnixMilli(), LeaseMS: keep.Milliseconds() + 1, Token: token}
			_, err := kv.update(ctx, s.key, v, rev)
			return err
		}
		return kv.del(ctx, s.key, rev)
	}
	err = write(rev)
	for try := 0; try < 3 && conflict(err); try++ {
		// Rewritten since our last write: still ours (a Handle of the
		// same owner refreshed it) is released under the new revision.
		cur, cerr := s.current(ctx, kv, "release")
		if cerr != nil {
			return cerr
		}
		err = write(cur.revision)
	}
	if err != nil {
		return netErr("release", err)
	}
	if s.handle {
		// A lease of the same owner and key in this process ends too.
		for _, o := range s.l.b.leases.Matching(func(o *lease) bool {
			return o.l.bucket == s.l.bucket && o.key == s.key && o.owner == s.owner
		}) {
			o.End(nil)
		}
	}
	s.End(nil)
	return nil
}
