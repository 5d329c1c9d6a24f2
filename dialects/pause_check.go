package dialects

import (
	"context"
	"errors"
	"sync"
	"time"
)

// PauseRecheck is how long a pause check that found no lease table waits
// before it looks for the table again.
const PauseRecheck = time.Minute

// WithPauseCheck returns a Locker that honours pauses kept in the lease
// table t of backend for a locker that does not read that table itself:
// the session strategy. Before each Acquire it reads the lock's row of t
// (one query); a paused lock gives the *HeldError of the pause (matching
// ErrHeld and ErrPaused) and the session lock is not asked for. A lock
// that is not paused, a table that does not exist (looked for again after
// PauseRecheck) or a row that cannot be read leave Acquire as it was: a
// pause never stops a job because it could not be checked.
//
// A table-strategy locker, or a backend with no lease table, is returned
// unchanged. ApplyPartitionBound must be applied to locker before it is
// wrapped; WithNamespace wraps the result.
func WithPauseCheck(backend Backend, locker Locker, t Table) Locker {
	if locker == nil || locker.Strategy() == StrategyTable {
		return locker
	}
	tl, err := tableLockerOf(backend, t)
	if err != nil {
		return locker
	}
	return &pauseCheckedLocker{Locker: locker, pauses: tl, dialect: backend.Detected().Dialect}
}

// tableLockerOf returns backend's lease locker for t.
func tableLockerOf(backend Backend, t Table) (LeaseLocker, error) {
	if lb, ok := backend.(LockBreaker); ok {
		return lb.LeaseLocker(t)
	}
	l, err := backend.Locker(StrategyTable, t)
	if err != nil {
		return nil, err
	}
	tl, ok := l.(LeaseLocker)
	if !ok {
		return nil, ErrUnsupported
	}
	return tl, nil
}

type pauseCheckedLocker struct {
	Locker
	pauses  LeaseLocker
	dialect string

	mu        sync.Mutex
	noTableAt time.Time // when the table was last found missing
}

// Acquire implements Locker.
func (l *pauseCheckedLocker) Acquire(ctx context.Context, name string, opts Options) (Lease, error) {
	if held := l.pause(ctx, name); held != nil {
		return nil, held
	}
	return l.Locker.Acquire(ctx, name, opts)
}

// pause returns the refusal of a paused lock, or nil.
func (l *pauseCheckedLocker) pause(ctx context.Context, name string) error {
	l.mu.Lock()
	skip := !l.noTableAt.IsZero() && time.Since(l.noTableAt) < PauseRecheck
	l.mu.Unlock()
	if skip || CheckName(name) != nil {
		return nil
	}
	row, found, err := l.pauses.Inspect(ctx, name)
	if errors.Is(err, ErrNoTable) {
		l.mu.Lock()
		l.noTableAt = time.Now()
		l.mu.Unlock()
	}
	if err != nil || !found || row.Expired() {
		return nil
	}
	if _, paused := PausedBy(row.Owner); !paused {
		return nil
	}
	return Wrap(l.dialect, "acquire", &HeldError{Name: name, Holder: row.Owner, Until: row.Until})
}
