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

// PauseCheckEvery is how often a handle reads the pause state of one lock:
// an Acquire reads the lock's row of the lease table only when the handle's
// last read of that name is older than this, and otherwise goes by that
// read. A pause set while a handle runs therefore reaches it within
// PauseCheckEvery (and within PauseRecheck when the lease table did not
// exist when the handle last looked for it); a process that acquires once,
// like `schedlock run`, reads it at that acquire.
const PauseCheckEvery = time.Second

// pauseCacheSize bounds the names whose last read a handle keeps; beyond
// it, reads older than PauseCheckEvery are forgotten.
const pauseCacheSize = 4096

// LeaseTableWitness is implemented by backends that learned, in a
// statement they sent anyway when they were opened (detection), whether
// the lease table their DSN names exists. LeaseTableExists answers for t;
// known is false when the backend did not look for t.
type LeaseTableWitness interface {
	LeaseTableExists(t Table) (exists, known bool)
}

// WithPauseCheck returns a Locker that honours pauses kept in the lease
// table t of backend for a locker that does not read that table itself:
// the session strategy. Before an Acquire it reads the lock's row of t
// (one query), at most once per PauseCheckEvery per name; a paused lock
// gives the *HeldError of the pause (matching ErrHeld and ErrPaused) and
// the session lock is not asked for. A lock that is not paused, a table
// that does not exist (looked for again after PauseRecheck; a backend
// that saw at Open that t does not exist, LeaseTableWitness, reads
// nothing until then) or a row that cannot be read leave Acquire as it
// was: a pause never stops a job because it could not be checked.
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
	l := &pauseCheckedLocker{Locker: locker, pauses: tl, dialect: backend.Detected().Dialect, read: map[string]pauseRead{}}
	if w, ok := backend.(LeaseTableWitness); ok {
		if exists, known := w.LeaseTableExists(t); known && !exists {
			l.noTableAt = time.Now()
		}
	}
	return l
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
	noTableAt time.Time            // when the table was last found missing
	read      map[string]pauseRead // the last read of each name
}

// pauseRead is one read of a lock's pause state: the refusal of a pause,
// or nil.
type pauseRead struct {
	at     time.Time
	paused *HeldError
}

// Acquire implements Locker.
func (l *pauseCheckedLocker) Acquire(ctx context.Context, name string, opts Options) (Lease, error) {
	if held := l.pause(ctx, name); held != nil {
		return nil, Wrap(l.dialect, "acquire", held)
	}
	return l.Locker.Acquire(ctx, name, opts)
}

// pause returns the refusal of a paused lock, or nil: from the handle's
// last read of name when it is recent, else from a new one.
func (l *pauseCheckedLocker) pause(ctx context.Context, name string) *HeldError {
	now := time.Now()
	l.mu.Lock()
	skip := !l.noTableAt.IsZero() && now.Sub(l.noTableAt) < PauseRecheck
	last, ok := l.read[name]
	l.mu.Unlock()
	if skip || CheckName(name) != nil {
		return nil
	}
	if ok && now.Sub(last.at) < PauseCheckEvery {
		return last.paused
	}
	row, found, err := l.pauses.Inspect(ctx, name)
	if errors.Is(err, ErrNoTable) {
		l.mu.Lock()
		l.noTableAt = time.Now()
		l.mu.Unlock()
	}
	if err != nil {
		return nil
	}
	var paused *HeldError
	if found && !row.Expired() {
		if _, ok := PausedBy(row.Owner); ok {
			paused = &HeldError{Name: name, Holder: row.Owner, Until: row.Until}
		}
	}
	l.remember(name, pauseRead{at: now, paused: paused})
	return paused
}

// remember keeps r as the last read of name, forgetting old reads when
// the handle keeps too many.
func (l *pauseCheckedLocker) remember(name string, r pauseRead) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.read) >= pauseCacheSize {
		for n, old := range l.read {
			if r.at.Sub(old.at) >= PauseCheckEvery {
				delete(l.read, n)
			}
		}
		if len(l.read) >= pauseCacheSize {
			clear(l.read)
		}
	}
	l.read[name] = r
}

// Close closes the wrapped locker when it has a Close (a session locker:
// its lock connections).
func (l *pauseCheckedLocker) Close() error {
	if c, ok := l.Locker.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}
