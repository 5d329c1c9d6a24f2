package locktable

import "time"

// SetClock makes l pick its writer time zone's frame from clock. Call it
// before the first operation.
func SetClock(l *Locker, clock func() time.Time) { l.clock = clock }

// Retired is how many statements l prepared for an earlier frame.
func Retired(l *Locker) int {
	l.retiredMu.Lock()
	defer l.retiredMu.Unlock()
	return len(l.retired)
}

// Prepares is how many statements l has prepared.
func Prepares(l *Locker) int64 { return l.prepares.Load() }
