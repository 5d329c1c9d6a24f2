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
// A timer fires at Until (the host time before the acquire or refresh was
// sent, plus at-most: never later than the key's expiry on the server):
// the lease is then lost and Done closes, so a holder that cannot reach
// Redis stops before anyone else can take the lock.
type lease struct {
	locker  *Locker
	name    string
	key     string
	owner   string
	token   int64  // native: the fencing token (0 on a Handle: not compared)
	value   string // shedlock: the value written ("" on a Handle: any of owner's)
	atMost  time.Duration
	atLeast time.Duration
	handle  bool
	// lockedAtMS is the server time of the acquire (0 on a Handle).
	lockedAtMS int64

	opMu sync.Mutex // serialises Refresh and Release

	mu         sync.Mutex // guards the fields below; never held across a round trip
	until      time.Time
	timer      *time.Timer
	gen        uint64
	finished   bool
	err        error
	refreshErr error
	done       chan struct{}
}

var _ dialects.RefreshFailure = (*lease)(nil)

func (l *Locker) newLease(name string, opts dialects.Options, handle bool) *lease {
	return &lease{locker: l, name: name, key: l.layout.key(name), owner: opts.Owner,
		atMost: opts.AtMost, atLeast: opts.AtLeast, handle: handle, done: make(chan struct{})}
}

func (s *lease) Name() string          { return s.name }
func (s *lease) Owner() string         { return s.owner }
func (s *lease) Done() <-chan struct{} { return s.done }

// Token returns the fencing token of the native layout; the shedlock
// layout has none.
func (s *lease) Token() (int64, bool) {
	if !s.locker.layout.native || s.token == 0 {
		return 0, false
	}
	return s.token, true
}

func (s *lease) Until() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.until
}

func (s *lease) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// LastRefreshError implements dialects.RefreshFailure.
func (s *lease) LastRefreshError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refreshErr
}

// Refresh implements dialects.Lease: one script run that checks the owner
// (and token or value) and sets the key's expiry to at-most from the
// server's now.
func (s *lease) Refresh(ctx context.Context) error {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	if err := s.endedErr("refresh"); err != nil {
		return err
	}
	start := time.Now()
	var res any
	var err error
	c := s.locker.b.client
	if s.locker.layout.native {
		res, err = refreshNative.Run(ctx, c, []string{s.key}, s.owner, strconv.FormatInt(s.token, 10), ms(s.atMost)).Result()
	} else {
		res, err = refreshShedlock.Run(ctx, c, []string{s.key}, s.owner, s.value, ms(s.atMost)).Result()
	}
	if err != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.refreshErr = dialects.Wrap(Name, "refresh", explain(err))
		return s.refreshErr
	}
	if err := s.judge("refresh", res); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return s.err // the timer ended it while the script ran
	}
	s.refreshErr = nil
	s.armLocked(leaseEnd(start, s.atMost))
	return nil
}

// Release implements dialects.Lease: one script run that checks the owner
// and deletes the key, or shortens its expiry to what at-least still
// needs (locked-at + at-least, on the server's clock).
func (s *lease) Release(ctx context.Context) error {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	if err := s.endedErr("release"); err != nil {
		return err
	}
	var res any
	var err error
	c := s.locker.b.client
	if s.locker.layout.native {
		res, err = releaseNative.Run(ctx, c, []string{s.key}, s.owner, strconv.FormatInt(s.token, 10), s.atLeast.Milliseconds()).Result()
	} else {
		keepUntil, kerr := s.atLeastEnd(ctx)
		if kerr != nil {
			return dialects.Wrap(Name, "release", kerr)
		}
		res, err = releaseShedlock.Run(ctx, c, []string{s.key}, s.owner, s.value, keepUntil).Result()
	}
	if err != nil {
		return dialects.Wrap(Name, "release", explain(err))
	}
	if err := s.judge("release", res); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return s.err
	}
	s.endLocked(nil)
	return nil
}

// atLeastEnd is the server time (ms) until which a ShedLock-layout
// release keeps the lock: locked-at + at-least, with locked-at from the
// acquire, or for a Handle from the value's instant; 0 without at-least.
func (s *lease) atLeastEnd(ctx context.Context) (int64, error) {
	if s.atLeast <= 0 {
		return 0, nil
	}
	if s.lockedAtMS == 0 {
		row, _, err := s.locker.inspectKey(ctx, s.key, s.name)
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

// judge reads a refresh or release reply: 1 done; else the owner check's
// refusal, which ends the lease as lost (another owner on a Handle is
// ErrNotOwner and leaves it open).
func (s *lease) judge(op string, res any) error {
	r, ok := res.([]any)
	if !ok || len(r) == 0 {
		return dialects.Wrap(Name, op, fmt.Errorf("unexpected reply of the %s script: %v", op, res))
	}
	switch asInt(r[0]) {
	case 1:
		return nil
	case -1:
		return s.lose(op, fmt.Sprintf("the key of lock %q is gone: its lease expired, it was deleted, or the server lost its data (a restart without persistence, a failover)", s.name))
	case -2:
		holder := ""
		if len(r) > 1 {
			holder = asString(r[1])
		}
		if !s.locker.layout.native {
			_, holder = parseShedlockValue(holder)
		}
		if s.handle {
			return dialects.Wrap(Name, op, fmt.Errorf("%w: lock %q is held by %s, not %s", dialects.ErrNotOwner, s.name, holder, s.owner))
		}
		return s.lose(op, fmt.Sprintf("lock %q was taken over by %s", s.name, holder))
	case -3:
		if s.locker.layout.native && len(r) > 1 {
			return s.lose(op, fmt.Sprintf("lock %q was acquired again (token %d, this lease has %d)", s.name, asInt(r[1]), s.token))
		}
		return s.lose(op, fmt.Sprintf("lock %q was acquired again by the same owner", s.name))
	}
	return dialects.Wrap(Name, op, fmt.Errorf("unexpected reply of the %s script: %v", op, res))
}

// endedErr is the error for an operation on a finished lease, or nil.
func (s *lease) endedErr(op string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.finished {
		return nil
	}
	if s.err != nil {
		return s.err
	}
	return dialects.Wrap(Name, op, fmt.Errorf("%w: lock %q was already released", dialects.ErrLeaseLost, s.name))
}

// lose ends the lease as lost and returns its error.
func (s *lease) lose(op, why string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		return s.err
	}
	err := dialects.Wrap(Name, op, fmt.Errorf("%w: %s", dialects.ErrLeaseLost, why))
	s.endLocked(err)
	return err
}

// armLocked sets Until and the timer that ends the lease then. s.mu is held.
func (s *lease) armLocked(until time.Time) {
	s.until = until
	s.gen++
	if s.timer != nil {
		s.timer.Stop()
	}
	gen := s.gen
	s.timer = time.AfterFunc(time.Until(until), func() { s.expire(gen) })
}

// expire ends the lease when its timer fires, unless a Refresh re-armed it.
func (s *lease) expire(gen uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished || gen != s.gen {
		return
	}
	why := "without a refresh"
	if s.refreshErr != nil {
		why = fmt.Sprintf("without a refresh; the last refresh failed: %v", s.refreshErr)
	}
	s.endLocked(dialects.Wrap(Name, "lease", fmt.Errorf("%w: lease of lock %q expired at %s %s",
		dialects.ErrLeaseLost, s.name, s.until.UTC().Format(time.RFC3339Nano), why)))
}

// endLocked finishes the lease with err (nil for a release). s.mu is held.
func (s *lease) endLocked(err error) {
	s.finished = true
	s.err = err
	if s.timer != nil {
		s.timer.Stop()
	}
	close(s.done)
}
