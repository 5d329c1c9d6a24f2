package kubernetes

import (
	"context"
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedlock/schedlock/dialects"
)

// lease is one acquire's lease, or a Handle (no timer, no object: it
// reads the Lease before each write).
type lease struct {
	l               *Locker
	name, lease     string // lock name, Lease name
	owner           string
	token           int64 // leaseTransitions of the acquire; 0 on a handle: not compared
	lockedAt        time.Time
	atMost, atLeast time.Duration
	handle          bool

	mu    sync.Mutex            // serialises Refresh and Release
	obj   *coordinationv1.Lease // the Lease as our last write left it
	until time.Time
	timer *time.Timer

	endMu sync.Mutex
	ended bool
	err   error
	done  chan struct{}
}

func (s *lease) Name() string  { return s.name }
func (s *lease) Owner() string { return s.owner }

// Token is the Lease's leaseTransitions after the acquire.
func (s *lease) Token() (int64, bool) { return s.token, s.token != 0 }

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
	s.l.b.leases.Untrack(s)
	close(s.done)
}

// expire ends a lease that ran out unrefreshed (this host's clock).
func (s *lease) expire() {
	s.endMu.Lock()
	left := time.Until(s.until)
	if left > 0 {
		if s.timer != nil && !s.ended {
			s.timer.Reset(left)
		}
		s.endMu.Unlock()
		return
	}
	s.endMu.Unlock()
	s.end(fmt.Errorf("%w: the lease of %q ran out (at-most %s)", dialects.ErrLeaseLost, s.name, s.atMost))
}

// current reads the Lease and checks it is still this lease's: held by
// the owner, with the acquire's leaseTransitions (when the token is
// known), and not expired. A lease from Acquire that is not ends at once.
func (s *lease) current(ctx context.Context, op string) (*coordinationv1.Lease, error) {
	lost := func(why string) error {
		err := fmt.Errorf("%w: %s of %q: %s", dialects.ErrLeaseLost, op, s.name, why)
		if !s.handle {
			s.end(err)
		}
		return err
	}
	cur, since, err := s.l.get(ctx, s.lease)
	if err != nil {
		return nil, err
	}
	if cur == nil {
		return nil, lost("its Lease was deleted")
	}
	r := recordOf(cur)
	switch {
	case r.holder == "":
		return nil, lost("the lock is free")
	case r.holder != s.owner:
		if s.handle {
			return nil, fmt.Errorf("%w: %s of %q: held by %s", dialects.ErrNotOwner, op, s.name, r.holder)
		}
		return nil, lost("taken over by " + r.holder)
	case s.token != 0 && r.transitions != s.token:
		return nil, lost(fmt.Sprintf("acquired again (token %d, this lease had %d)", r.transitions, s.token))
	case s.handle && judge(r, since, time.Now(), s.l.b.cfg.maxSkew).free:
		return nil, lost("the lease ran out")
	}
	return cur, nil
}

// afterEnd is the error of a call on a lease that has ended.
func (s *lease) afterEnd(op string) error {
	return fmt.Errorf("%w: %s of %q after the lease ended", dialects.ErrLeaseLost, op, s.name)
}

// write updates the Lease from base (the version to write under) with
// spec r; on a conflict it reads the Lease once and, still ours, writes
// again under the version read (a handle of the same owner wrote it);
// otherwise the lease is lost.
func (s *lease) write(ctx context.Context, op string, base *coordinationv1.Lease, r func(cur record) record) (*coordinationv1.Lease, error) {
	for try := 0; ; try++ {
		if base == nil {
			cur, err := s.current(ctx, op)
			if err != nil {
				return nil, err
			}
			base = cur
		}
		obj := base.DeepCopy()
		setSpec(obj, r(recordOf(base)))
		out, err := s.l.leases().Update(ctx, obj, metav1.UpdateOptions{})
		if err == nil {
			s.l.b.seen.noteOwn(out)
			return out, nil
		}
		if !apierrors.IsConflict(err) || try == 2 {
			if apierrors.IsNotFound(err) {
				_, cerr := s.current(ctx, op)
				return nil, cerr
			}
			return nil, s.l.b.requestErr("update Lease "+s.l.ns+"/"+s.lease, err)
		}
		base = nil
	}
}

// Refresh implements dialects.Lease: one update of renewTime (and
// leaseDurationSeconds) under the resourceVersion of our last write.
func (s *lease) Refresh(ctx context.Context) error {
	return dialects.Wrap(Name, "refresh", s.refresh(ctx))
}

func (s *lease) refresh(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.handle && s.isEnded() {
		return s.afterEnd("refresh")
	}
	start := time.Now()
	out, err := s.write(ctx, "refresh", s.obj, func(cur record) record {
		cur.holder, cur.duration, cur.renew = s.owner, seconds(s.atMost), start
		return cur
	})
	if err != nil {
		return err
	}
	s.obj = out
	if s.handle {
		s.obj = nil
	}
	s.endMu.Lock()
	s.until = start.Add(s.atMost)
	s.endMu.Unlock()
	return nil
}

// Release implements dialects.Lease: one update that empties
// holderIdentity (client-go's release), or, while at-least has not
// passed, renews the Lease for the time at-least still needs.
func (s *lease) Release(ctx context.Context) error {
	return dialects.Wrap(Name, "release", s.release(ctx))
}

func (s *lease) release(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.handle && s.isEnded() {
		return s.afterEnd("release")
	}
	_, err := s.write(ctx, "release", s.obj, func(cur record) record {
		now := time.Now()
		lockedAt := s.lockedAt
		if s.handle {
			lockedAt = cur.acquire
		}
		if keep := time.Until(lockedAt.Add(s.atLeast)); keep > 0 {
			// renewTime is set back so that renewTime plus the whole
			// seconds of the duration is the end of at-least.
			cur.holder, cur.duration = s.owner, seconds(keep)
			cur.renew = lockedAt.Add(s.atLeast).Add(-cur.duration)
			return cur
		}
		return record{duration: time.Second, acquire: now, renew: now, transitions: cur.transitions}
	})
	if err != nil {
		return err
	}
	if s.handle {
		// A lease of the same owner and Lease in this process ends too.
		s.l.b.endLocal(s.l.ns, s.lease, s.owner, nil)
	}
	s.end(nil)
	return nil
}
