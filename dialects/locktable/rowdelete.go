package locktable

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// RowDeleter is implemented by a Builder that writes the statements of
// tables whose release deletes the row (dialects.Schema.ReleaseDeletesRow:
// sys_sched_lock, whose applications lock with a plain INSERT). Each is one
// statement on the database clock, read as its Result says (success: a row
// was deleted).
type RowDeleter interface {
	// ReleaseDelete deletes the row of ArgName that ArgOwner holds, while
	// its lease is live and locked_at + ArgAtLeastMs <= now: a release
	// once at-least has passed. An earlier release runs Release, which
	// keeps the row until locked_at + at-least.
	ReleaseDelete(s dialects.Schema) Stmt
	// Sweep deletes the row of ArgName that ArgOwner holds once its lease
	// has ended (until <= now): the row an early release kept, once
	// at-least has passed. A live row, or another owner's, stays.
	Sweep(s dialects.Schema) Stmt
	// Delete deletes the row of ArgName whoever holds it, live or expired
	// (an administrator's forced unlock).
	Delete(s dialects.Schema) Stmt
}

// Sweep timing: a kept row is deleted at the host's locked-at + at-least,
// or later when the database says its lease still runs, at most
// sweepTries times; a failed statement is sent again after sweepRetry.
const (
	sweepTries = 8
	sweepRetry = time.Second
	sweepSlack = 5 * time.Millisecond
)

// deletesRows reports whether the Locker releases by deleting rows.
func (l *Locker) deletesRows() bool {
	_, ok := l.b.(RowDeleter)
	return ok && l.schema.ReleaseDeletesRow()
}

// releaseDeleting is Release on a table whose release deletes the row:
// delete it when at-least has passed; else keep it until locked-at +
// at-least (the Release statement) and delete it then, in the background.
func (s *lease) releaseDeleting(ctx context.Context) error {
	l := s.locker
	_, done, err := l.exec(ctx, opReleaseDelete, s.binding())
	if err != nil {
		return dialects.Wrap(s.dialect(), "release", err)
	}
	if done {
		return s.End(nil)
	}
	_, done, err = l.exec(ctx, opRelease, s.binding())
	if err != nil {
		return dialects.Wrap(s.dialect(), "release", err)
	}
	if !done {
		return s.explain(ctx, "release")
	}
	l.sweepLater(s.stored, s.owner, s.lockedAt.Add(l.storedAtLeast(s.atLeast)), s.pendingSweep())
	return s.End(nil)
}

var _ dialects.Lingering = (*lease)(nil)

// closedChan is what Freed returns while no row deletion is pending.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// Freed implements dialects.Lingering: it is closed once the Locker has
// nothing more to do for the lease in the background. That is at once,
// except on a table whose release deletes the row (sys_sched_lock) after a
// Release that kept the row until locked-at + at-least, or found the
// lease lost with its row not yet expired: then once the Locker has
// deleted that row (or given up on it: Close, the row taken over).
func (s *lease) Freed() <-chan struct{} {
	s.sweptMu.Lock()
	defer s.sweptMu.Unlock()
	return s.swept
}

// pendingSweep opens Freed for a row deletion about to start and returns
// the function that closes it when the deletion is over.
func (s *lease) pendingSweep() func() {
	c := make(chan struct{})
	s.sweptMu.Lock()
	s.swept = c
	s.sweptMu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(c) }) }
}

// sweepLater deletes the kept row of stored held by owner once its lease
// has ended, from about host time at on, and calls finished when no row of
// owner is left, or when it gives up: when the Locker is closed, or after
// sweepTries tries (the expired row then stays until the next acquire of
// the name takes it over).
func (l *Locker) sweepLater(stored, owner string, at time.Time, finished func()) {
	l.sweeps.Add(1)
	go func() {
		defer l.sweeps.Done()
		defer finished()
		wait := time.Until(at) + sweepSlack
		for try := 0; try < sweepTries; try++ {
			timer := time.NewTimer(max(wait, 0))
			select {
			case <-l.closing:
				timer.Stop()
				return
			case <-timer.C:
			}
			next, gone := l.sweepOnce(stored, owner)
			if gone {
				return
			}
			wait = next
		}
	}()
}

// sweepOnce sends Sweep once. gone reports that no row of owner is left;
// otherwise next is how long to wait before the next try: until the
// database's lease end when the row still runs, sweepRetry after an error.
func (l *Locker) sweepOnce(stored, owner string) (next time.Duration, gone bool) {
	ctx, cancel := context.WithTimeout(context.Background(), dialects.ReleaseTimeout)
	defer cancel()
	go func() {
		select {
		case <-l.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	_, done, err := l.exec(ctx, opSweep, binding{name: stored, owner: owner})
	if err != nil {
		return sweepRetry, false
	}
	if done {
		return 0, true
	}
	row, found, err := l.inspectStored(ctx, stored)
	switch {
	case err != nil:
		return sweepRetry, false
	case !found || row.Owner != owner:
		return 0, true
	}
	return max(row.Until.Sub(row.DBNow), 0) + sweepSlack, false
}

// deleteExpiredOwn deletes the row of the lease when it is still its
// owner's but has expired (the lease was lost, nobody took it over), so
// that an application that locks by INSERT is not refused by it.
// Best-effort: the loss is reported whatever happens here.
func (s *lease) deleteExpiredOwn(ctx context.Context) {
	_, _, _ = s.locker.exec(ctx, opSweep, binding{name: s.stored, owner: s.owner})
}

// sweepLost deletes, in the background, the row of a lease that was lost
// while nobody took it over, once the database says it has expired: an
// application that locks by INSERT would be refused by it for good.
func (s *lease) sweepLost() {
	s.lostSwept.Do(func() { s.locker.sweepLater(s.stored, s.owner, time.Now(), s.pendingSweep()) })
}

// deleteRow deletes the row of stored whoever holds it (forced unlock on
// a table whose release deletes the row); done reports a row was there.
func (l *Locker) deleteRow(ctx context.Context, stored string) (bool, error) {
	_, done, err := l.exec(ctx, opDelete, binding{name: stored})
	if err != nil {
		return false, fmt.Errorf("delete the row: %w", err)
	}
	return done, nil
}
