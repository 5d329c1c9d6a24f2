package dialects

import (
	"fmt"
	"sync"
)

// LeaseSet is a backend's live leases, which its Close ends: Track adds
// one (refused once the set is closed), Untrack forgets one, Matching
// finds those a release or a force-release must end too, and Close ends
// every one left.
//
// The zero value is an empty, open set. It is safe for concurrent use.
// Close's end and TrackSweeping's ended run outside the set's lock, so
// they may end a lease that untracks itself (a LeaseEnd's OnEnd hook, say)
// without deadlock; only Matching's match runs under it.
type LeaseSet[L comparable] struct {
	mu      sync.Mutex
	live    map[L]struct{}
	closed  bool
	sweepAt int
}

// BackendClosed is the error a backend's Close ends each live lease
// with: an ErrLeaseLost saying that the backend was closed.
func BackendClosed() error {
	return fmt.Errorf("%w: the backend was closed", ErrLeaseLost)
}

// Track adds l; false (and l not added) once the set is closed.
func (s *LeaseSet[L]) Track(l L) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.live == nil {
		s.live = map[L]struct{}{}
	}
	s.live[l] = struct{}{}
	return true
}

// TrackSweeping is Track for a backend whose leases may end without
// being untracked (an expiry nobody watched): once the set has grown to
// twice its size after the last sweep (64 at least), it first drops the
// leases ended reports ended. ended runs outside the set's lock.
func (s *LeaseSet[L]) TrackSweeping(l L, ended func(L) bool) bool {
	s.mu.Lock()
	var check []L
	if !s.closed && len(s.live) >= s.sweepAt {
		check = make([]L, 0, len(s.live))
		for o := range s.live {
			check = append(check, o)
		}
		s.sweepAt = max(64, 2*len(s.live)) // no other Track sweeps meanwhile
	}
	s.mu.Unlock()
	var gone []L
	for _, o := range check {
		if ended(o) {
			gone = append(gone, o)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if check != nil {
		for _, o := range gone {
			delete(s.live, o)
		}
		s.sweepAt = max(64, 2*len(s.live))
	}
	if s.live == nil {
		s.live = map[L]struct{}{}
	}
	s.live[l] = struct{}{}
	return true
}

// Untrack forgets l (nothing if it is not in the set).
func (s *LeaseSet[L]) Untrack(l L) {
	s.mu.Lock()
	delete(s.live, l)
	s.mu.Unlock()
}

// Len is the number of leases in the set.
func (s *LeaseSet[L]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.live)
}

// Matching is the leases in the set for which match is true (match runs
// under the set's lock: it must only read the lease's fixed fields).
func (s *LeaseSet[L]) Matching(match func(L) bool) []L {
	s.mu.Lock()
	defer s.mu.Unlock()
	var found []L
	for l := range s.live {
		if match(l) {
			found = append(found, l)
		}
	}
	return found
}

// Close closes the set, so that Track refuses from now on, and calls end
// on each lease in it, outside the set's lock. It reports false, and ends
// nothing, when the set was closed already.
func (s *LeaseSet[L]) Close(end func(L)) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	s.closed = true
	live := make([]L, 0, len(s.live))
	for l := range s.live {
		live = append(live, l)
	}
	s.mu.Unlock()
	for _, l := range live {
		end(l)
	}
	return true
}
