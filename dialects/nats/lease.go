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
type lease struct {
	l               *Locker
	name, key       string
	owner           string
	token           uint64
	lockedAt        time.Time
	atMost, atLeast time.Duration
	handle          bool

	mu    sync.Mutex // serialises Refresh and Release
	rev   uint64     // the revision of our last write
	until time.Time
	timer *time.Timer

	endMu sync.Mutex
	ended bool
	err   error
	done  chan struct{}
}

func (s *lease) Name() string  { return s.name }
func (s *lease) Owner() string { return s.owner }

// Token is the KV revision of the acquire write.
func (s *lease) Token() (int64, bool) { return int64(s.token), s.token != 0 }

func (s *lease) Done() <-chan struct{} { return s.done }

func (s *lease) Until() time.Time {
	s.endMu.Lock()
	defer s.endMu.Unlock()
	return s.until
}

func (s *lease) Err() error {
	s.endMu.Lock()
	defer s.endMu.Unlock()
	return s.err
}

func (s *lease) isEnded() bool {
	s.endMu.Lock()
	defer s.endMu.Unlock()
	return s.ended
}

// end ends the lease with err (nil: a clean release).
func (s *lease) end(err error) {
	s.endMu.Lock()
	if s.ended {
		s.endMu.Unlock()
		return
	}
	s.ended = true
	s.err = err
	if s.timer != nil {
		s.timer.Stop()
	}
	s.endMu.Unlock()
	s.l.b.untrack(s)
	close(s.done)
}

// expire ends a lease that ran out unrefreshed (holder's clock).
func (s *lease) expire() {
	s.endMu.Lock()
	left := time.Until(s.until)
	s.endMu.Unlock()
	if left > 0 {
		s.endMu.Lock()
		if s.timer != nil && !s.ended {
			s.timer.Reset(left)
		}
		s.endMu.Unlock()
		return
	}
	s.end(fmt.Errorf("%w: the lease of %q ran out (at-most %s)", dialects.ErrLeaseLost, s.name, s.atMost))
}

// dueNow ends a lease whose end has passed on this host's clock, as its
// timer will (which a busy host may run late), and reports whether it did.
func (s *lease) dueNow() bool {
	if time.Now().Before(s.Until()) {
		return false
	}
	s.expire()
	return true
}

// current reads the key and checks it is still this lease's: the
// revision to write under, and the value. A lease from Acquire also
// checks its last revision.
func (s *lease) current(ctx context.Context, kv ops, op string) (state, error) {
	lost := func(why string) error {
		err := fmt.Errorf("%w: %s of %q: %s", dialects.ErrLeaseLost, op, s.name, why)
		if !s.handle {
			s.end(err)
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
	if !s.handle && (s.isEnded() || s.dueNow()) {
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
	s.endMu.Lock()
	s.until = start.Add(s.atMost)
	s.endMu.Unlock()
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
	if !s.handle && (s.isEnded() || s.dueNow()) {
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
		s.l.b.mu.Lock()
		var ended []*lease
		for o := range s.l.b.leases {
			if o.l.bucket == s.l.bucket && o.key == s.key && o.owner == s.owner {
				ended = append(ended, o)
			}
		}
		s.l.b.mu.Unlock()
		for _, o := range ended {
			o.end(nil)
		}
	}
	s.end(nil)
	return nil
}
