package mongodb

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/schedlock/schedlock/dialects"
)

// lease is one acquire's lease, or a Handle (no timer; it reads the
// document before each write).
//
// Its end (dialects.LeaseEnd) is at-most from the host time before the
// acquire or the last refresh was sent; an acquire's lease ends then,
// unrefreshed, and whichever way it ends the backend forgets it.
type lease struct {
	dialects.LeaseEnd

	l               *Locker
	name            string
	owner           string
	token           int64     // the native layout's token (0: a Handle without one)
	lockedAt        time.Time // the acquire's lockedAt: identifies it on the shedlock layout
	atMost, atLeast time.Duration
	handle          bool

	mu sync.Mutex // serialises Refresh and Release
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

// Token is the document's token after the acquire's $inc (native layout);
// the shedlock layout has none.
func (s *lease) Token() (int64, bool) { return s.token, s.token != 0 }

// ours matches this lease's document while its lease runs at now: the
// owner and the acquire (token on the native layout, lockedAt on
// ShedLock's, which has no token).
func (s *lease) ours(now time.Time, token int64, lockedAt time.Time) bson.D {
	f := bson.D{{Key: fieldName, Value: s.name}, {Key: fieldOwner, Value: s.owner}}
	if s.l.layout.token {
		f = append(f, bson.E{Key: fieldToken, Value: token})
	} else {
		f = append(f, bson.E{Key: fieldLockedAt, Value: lockedAt})
	}
	return append(f, bson.E{Key: fieldUntil, Value: bson.D{{Key: "$gt", Value: now}}})
}

// why reads the document after a guarded write matched nothing and says
// why: another owner (ErrNotOwner, the lease kept) or the lease lost
// (ErrLeaseLost, the lease ended).
func (s *lease) why(ctx context.Context, op string) error {
	d, found, err := s.l.read(ctx, s.name)
	if err != nil {
		return err
	}
	lost := func(why string) error {
		err := fmt.Errorf("%w: %s of %q: %s", dialects.ErrLeaseLost, op, s.name, why)
		if !s.handle {
			s.End(err)
		}
		return err
	}
	switch {
	case !found:
		return lost("the lock is free")
	case d.owner != s.owner && !s.handle:
		return lost("taken by " + d.owner)
	case d.owner != s.owner:
		return fmt.Errorf("%w: %s of %q: held by %s", dialects.ErrNotOwner, op, s.name, d.owner)
	case s.l.layout.token && s.token != 0 && d.token != s.token:
		return lost(fmt.Sprintf("acquired again (token %d, this lease had %d)", d.token, s.token))
	case !s.l.layout.token && !s.handle && !d.lockedAt.Equal(s.lockedAt):
		return lost("acquired again at " + d.lockedAt.Format(time.RFC3339Nano))
	default:
		return lost("the lease ran out")
	}
}

// current is what a Handle writes under: the token and lockedAt of the
// owner's live lease.
func (s *lease) current(ctx context.Context, op string) (int64, time.Time, error) {
	if !s.handle {
		return s.token, s.lockedAt, nil
	}
	d, found, err := s.l.read(ctx, s.name)
	if err != nil {
		return 0, time.Time{}, err
	}
	switch {
	case !found:
		return 0, time.Time{}, fmt.Errorf("%w: %s of %q: the lock is free", dialects.ErrLeaseLost, op, s.name)
	case d.owner != s.owner:
		return 0, time.Time{}, fmt.Errorf("%w: %s of %q: held by %s", dialects.ErrNotOwner, op, s.name, d.owner)
	case s.token != 0 && s.l.layout.token && d.token != s.token:
		return 0, time.Time{}, fmt.Errorf("%w: %s of %q: acquired again (token %d, not %d)", dialects.ErrLeaseLost, op, s.name, d.token, s.token)
	case !d.until.After(s.l.b.serverNow()):
		return 0, time.Time{}, fmt.Errorf("%w: %s of %q: the lease ran out", dialects.ErrLeaseLost, op, s.name)
	}
	return d.token, d.lockedAt, nil
}

// afterEnd is the error of a call on a lease that has ended.
func (s *lease) afterEnd(op string) error {
	if err := s.Err(); err != nil {
		return fmt.Errorf("%s of %q after the lease ended: %w", op, s.name, err)
	}
	return fmt.Errorf("%w: %s of %q after the lease ended", dialects.ErrLeaseLost, op, s.name)
}

// Refresh implements dialects.Lease: one updateOne that sets the lease
// end from now, matching the owner, the acquire and a live lease.
func (s *lease) Refresh(ctx context.Context) error {
	return dialects.Wrap(Name, "refresh", s.refresh(ctx))
}

func (s *lease) refresh(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ended, _ := s.Ended(); ended && !s.handle { // an expiry due on this host's clock included
		return s.afterEnd("refresh")
	}
	token, lockedAt, err := s.current(ctx, "refresh")
	if err != nil {
		return err
	}
	start := time.Now()
	now := s.l.b.serverNow()
	res, err := s.l.coll.UpdateOne(ctx, s.ours(now, token, lockedAt),
		bson.D{{Key: "$set", Value: bson.D{{Key: fieldUntil, Value: now.Add(s.atMost)}}}})
	if err != nil {
		return s.l.b.failed("refresh", err)
	}
	if res.MatchedCount == 0 {
		return s.why(ctx, "refresh")
	}
	// A lease that ended while the update was on its way stays ended.
	_ = s.Extend(start.Add(s.atMost))
	return nil
}

// Release implements dialects.Lease: one updateOne that sets the lease
// end to the later of now and locked-at plus at-least, matching the
// owner, the acquire and a live lease. The document stays (so the token
// keeps counting), naming its last owner, as ShedLock's unlock leaves it.
func (s *lease) Release(ctx context.Context) error {
	return dialects.Wrap(Name, "release", s.release(ctx))
}

func (s *lease) release(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ended, _ := s.Ended(); ended && !s.handle { // an expiry due on this host's clock included
		return s.afterEnd("release")
	}
	token, lockedAt, err := s.current(ctx, "release")
	if err != nil {
		return err
	}
	now := s.l.b.serverNow()
	end := now
	if keep := lockedAt.Add(s.atLeast); keep.After(end) {
		end = keep
	}
	res, err := s.l.coll.UpdateOne(ctx, s.ours(now, token, lockedAt),
		bson.D{{Key: "$set", Value: bson.D{{Key: fieldUntil, Value: end}}}})
	if err != nil {
		return s.l.b.failed("release", err)
	}
	if res.MatchedCount == 0 {
		return s.why(ctx, "release")
	}
	if s.handle {
		// A lease of the same owner and name in this process ends too.
		s.l.b.endLeases(s.l.layout.coll, s.name, s.owner, nil)
	}
	s.End(nil)
	return nil
}
