package sqlkit

import (
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// PartitionBounder is implemented by Lockers whose locks the server frees
// on its own when their client vanishes silently (SessionLocker): the
// bound is how soon. Set it before the first Acquire.
type PartitionBounder interface {
	SetPartitionBound(bound time.Duration)
}

var _ PartitionBounder = (*SessionLocker)(nil)

// SetPartitionBound sets PartitionBound (0: DefaultPartitionBound). It
// applies to the lock connections opened afterwards, so it is set before
// the first Acquire.
func (l *SessionLocker) SetPartitionBound(bound time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.PartitionBound = bound
}

// ApplyPartitionBound sets bound on l when l has one (a session locker);
// a zero bound leaves the default. It reports whether l took it.
func ApplyPartitionBound(l dialects.Locker, bound time.Duration) bool {
	b, ok := l.(PartitionBounder)
	if ok && bound > 0 {
		b.SetPartitionBound(bound)
	}
	return ok
}
