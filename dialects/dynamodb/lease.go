package dynamodb

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/schedlock/schedlock/dialects"
)

// lease is one lock held as an item, from Acquire or Handle.
//
// Its end (dialects.LeaseEnd) is the client's time before the acquire or
// refresh was sent, plus at-most; the request writes a lease end a grace
// later (storedEnd), so a holder that cannot reach DynamoDB stops before
// a contender can take the lock, with room for the holder to stop its
// work and for a small skew between the two clocks.
type lease struct {
	dialects.LeaseEnd

	locker          *Locker
	name            string
	owner           string
	token           int64  // native: the fencing token (0 on a Handle: not compared)
	lockedAt        string // the acquire's locked-at as written ("" on a Handle)
	atMost, atLeast time.Duration
	handle          bool

	opMu sync.Mutex // serialises Refresh and Release
}

// storedEnd is the lease end a request sent at start writes for atMost:
// a grace of a tenth of atMost (at most a second) after the holder's own
// end (start plus atMost), so that the holder has stopped before anyone
// can take the lock over.
func storedEnd(start time.Time, atMost time.Duration) time.Time {
	return start.Add(atMost + min(atMost/10, time.Second))
}

func (l *Locker) newLease(name string, opts dialects.Options, handle bool, until time.Time) *lease {
	s := &lease{locker: l, name: name, owner: opts.Owner, atMost: opts.AtMost, atLeast: opts.AtLeast, handle: handle}
	s.Start(until, dialects.ExpiredLease(Name, name))
	return s
}

func (s *lease) Name() string  { return s.name }
func (s *lease) Owner() string { return s.owner }

// Token is the counter the acquire added to (native layout); the
// ShedLock layout has none.
func (s *lease) Token() (int64, bool) {
	if s.locker.layout.token == "" || s.token == 0 {
		return 0, false
	}
	return s.token, true
}

// End ends the lease and forgets it in the backend.
func (s *lease) End(err error) error {
	e := s.LeaseEnd.End(err)
	s.locker.b.leases.Untrack(s)
	return e
}

// guard is the condition of a refresh or release: this lease's owner, its
// acquire (the token, or on the ShedLock layout the locked-at written),
// and a lease end still ahead of now.
func (s *lease) guard(now string, lockedAt string) (string, map[string]types.AttributeValue, map[string]string) {
	l := s.locker.layout
	cond := "#b = :owner AND #u > :now"
	values := map[string]types.AttributeValue{":owner": sv(s.owner), ":now": sv(now)}
	names := map[string]string{"#u": l.until, "#b": l.by}
	switch {
	case l.token != "" && s.token != 0:
		cond += " AND #t = :token"
		values[":token"] = &types.AttributeValueMemberN{Value: fmt.Sprint(s.token)}
		names["#t"] = l.token
	case lockedAt != "":
		cond += " AND #a = :at"
		values[":at"] = sv(lockedAt)
		names["#a"] = l.at
	}
	return cond, values, names
}

// endedErr is the error of an operation on a finished lease, or nil.
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

// Refresh implements dialects.Lease: one UpdateItem that moves the lease
// end to at-most from the client's now, under the guard.
func (s *lease) Refresh(ctx context.Context) error {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	if err := s.endedErr("refresh"); err != nil {
		return err
	}
	now := time.Now().Truncate(time.Millisecond)
	until := iso(storedEnd(now, s.atMost))
	cond, values, names := s.guard(iso(now), s.lockedAt)
	values[":until"] = sv(until)
	_, err := s.locker.b.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           aws.String(s.locker.layout.table),
		Key:                                 s.locker.layout.keyOf(s.name),
		UpdateExpression:                    aws.String("SET #u = :until"),
		ConditionExpression:                 aws.String(cond),
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var cf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &cf):
		if err := s.refused(ctx, "refresh", cf.Item, until); err != nil {
			return err
		}
	case isNotFound(err):
		s.locker.forget()
		return s.lose("refresh", fmt.Sprintf("table %s is gone, and lock %q with it", s.locker.layout.table, s.name))
	case err != nil:
		return s.RefreshFailed(dialects.Wrap(Name, "refresh", s.locker.b.classify("refresh", err)))
	}
	return s.Extend(now.Add(s.atMost))
}

// Release implements dialects.Lease: one UpdateItem that moves the lease
// end to now, or to locked-at plus at-least while that is ahead, under
// the guard (ShedLock's release writes the same lockUntil, unguarded).
// The item stays: its token counter goes on. A Handle with at-least reads
// the item first for its locked-at.
func (s *lease) Release(ctx context.Context) error {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	if err := s.endedErr("release"); err != nil {
		return err
	}
	lockedAt := s.lockedAt
	if lockedAt == "" && s.atLeast > 0 {
		it, found, err := s.locker.get(ctx, s.name)
		if err != nil {
			return dialects.Wrap(Name, "release", err)
		}
		if found && it.owner == s.owner {
			lockedAt = it.lockedRaw
		}
	}
	now := time.Now()
	keep := now
	if at := parseISO(lockedAt); !at.IsZero() && at.Add(s.atLeast).After(keep) {
		keep = at.Add(s.atLeast)
	}
	keepISO := iso(keep)
	if keep.After(now) {
		// Rounded up: the stored instant keeps milliseconds, and the lock
		// must not come free before at-least has passed.
		keepISO = iso(keep.Add(time.Millisecond - 1).Truncate(time.Millisecond))
	}
	cond, values, names := s.guard(iso(now), lockedAt)
	values[":keep"] = sv(keepISO)
	_, err := s.locker.b.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           aws.String(s.locker.layout.table),
		Key:                                 s.locker.layout.keyOf(s.name),
		UpdateExpression:                    aws.String("SET #u = :keep"),
		ConditionExpression:                 aws.String(cond),
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var cf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &cf):
		if err := s.refused(ctx, "release", cf.Item, keepISO); err != nil {
			return err
		}
	case isNotFound(err):
		s.locker.forget()
		return s.lose("release", fmt.Sprintf("table %s is gone, and lock %q with it", s.locker.layout.table, s.name))
	case err != nil:
		return dialects.Wrap(Name, "release", s.locker.b.classify("release", err))
	}
	if s.handle {
		// A lease of the same owner and name in this process ends too.
		for _, o := range s.locker.b.leases.Matching(func(o *lease) bool {
			return o.locker.layout.table == s.locker.layout.table && o.name == s.name && o.owner == s.owner
		}) {
			_ = o.End(nil)
		}
	}
	_ = s.End(nil)
	return nil
}

// refused reads a refresh or release whose guard failed, from the item
// as it was (ReturnValuesOnConditionCheckFailure; read again where the
// endpoint does not return it): nil when it holds what this very request
// wrote (an SDK retry of a request whose first answer was lost), else
// ErrNotOwner for a Handle of another owner's lock, else the lease is
// lost and ends.
func (s *lease) refused(ctx context.Context, op string, old map[string]types.AttributeValue, wrote string) error {
	it, found := s.locker.layout.decode(old)
	if old == nil {
		var err error
		if it, found, err = s.locker.get(ctx, s.name); err != nil {
			return err
		}
	}
	switch {
	case !found:
		return s.lose(op, fmt.Sprintf("lock %q has no item: it was deleted", s.name))
	case it.owner == s.owner && iso(it.until) == wrote && (s.token == 0 || it.token == s.token):
		return nil
	case it.owner != s.owner && s.handle:
		return dialects.Wrap(Name, op, fmt.Errorf("%w: lock %q is held by %s, not %s", dialects.ErrNotOwner, s.name, it.owner, s.owner))
	case it.owner != s.owner:
		return s.lose(op, fmt.Sprintf("lock %q was taken over by %s", s.name, it.owner))
	case s.token != 0 && it.hasToken && it.token != s.token:
		return s.lose(op, fmt.Sprintf("lock %q was acquired again (token %d, this lease has %d)", s.name, it.token, s.token))
	case s.lockedAt != "" && it.lockedRaw != s.lockedAt:
		return s.lose(op, fmt.Sprintf("lock %q was acquired again by the same owner", s.name))
	}
	return s.lose(op, fmt.Sprintf("the lease of lock %q ended at %s", s.name, dialects.FormatTime(it.until)))
}

// lose ends the lease as lost and returns its error.
func (s *lease) lose(op, why string) error {
	return s.End(dialects.Wrap(Name, op, fmt.Errorf("%w: %s", dialects.ErrLeaseLost, why)))
}
