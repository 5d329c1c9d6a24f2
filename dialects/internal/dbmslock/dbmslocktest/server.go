package dbmslocktest

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/schedlock/schedlock/dialects/internal/dbmslock"
	"github.com/schedlock/schedlock/internal/fakesql"
)

// firstLockID is the first id ALLOCATE_UNIQUE hands out, as Oracle's
// DBMS_LOCK_ALLOCATED numbers them.
const firstLockID = 1073741824

// Server is the DBMS_LOCK state of a simulated server, shared by the
// Oracle and Dameng simulators: ALLOCATE_UNIQUE's names and lock ids, the
// user locks sessions hold (released by RELEASE or the end of the
// session), and the timeouts of the REQUESTs that waited. Sessions are
// fakesql session ids. It has no mutex of its own: the simulator calls it
// with its own held, and passes that mutex to Call, which releases it
// while a REQUEST waits.
type Server struct {
	// ReRequestGrants makes REQUEST of a lock the session already owns
	// answer 0 instead of 4 and take it once more, so that it takes as
	// many RELEASEs to free: the behaviour IvorySQL's emulation had
	// (IvorySQL#1598).
	ReRequestGrants bool
	// WaitCode, when set, is the answer of every REQUEST with a timeout,
	// which then grants nothing.
	WaitCode *int64

	allocated map[string]int64    // DBMS_LOCK_ALLOCATED: name → lock id
	next      int64               // the next lock id
	holder    map[int64]int64     // lock id → holding session
	depth     map[int64]int       // lock id → times taken (ReRequestGrants)
	since     map[int64]time.Time // lock id → when it was granted
	waits     []int64             // the timeout of every REQUEST with one
	changes   fakesql.Changes     // notified when a lock is freed
}

// Lock is one user lock a session holds.
type Lock struct {
	Name    string    // the DBMS_LOCK name
	ID      int64     // its lock id
	Session int64     // the holding session
	Since   time.Time // when it was granted (host clock)
}

// ID returns the lock id of name, allocating one for a new name, as
// ALLOCATE_UNIQUE does.
func (s *Server) ID(name string) int64 {
	if s.allocated == nil {
		s.allocated, s.next = map[string]int64{}, firstLockID
		s.holder, s.depth, s.since = map[int64]int64{}, map[int64]int{}, map[int64]time.Time{}
	}
	id, ok := s.allocated[name]
	if !ok {
		id = s.next
		s.next++
		s.allocated[name] = id
	}
	return id
}

// Grant makes session hold name's lock since the time since, as if it had
// requested it then: for a test's lock of another application.
func (s *Server) Grant(name string, session int64, since time.Time) {
	id := s.ID(name)
	s.holder[id], s.depth[id], s.since[id] = session, 1, since
}

// Call runs the block call ("trylock", "unlock", "holds" or "lock", the
// golden files' names of the session-lock blocks) of session on the
// DBMS_LOCK name name, and returns the return code the block hands back:
// REQUEST answers 0 (granted), 1 (another session holds it) or 4 (this
// session already does); RELEASE 0 or 4 (not the owner); the Holds block
// gives back at once a lock its REQUEST has just taken. A "lock" takes the
// REQUEST's timeout, which must be whole seconds (int64) below MAXWAIT,
// and waits up to it for the holder's release, releasing mu meanwhile;
// ctx ending the wait is ctx's error, which the simulator answers as its
// server would.
func (s *Server) Call(ctx context.Context, mu *sync.Mutex, session int64, call, name string, timeout any) (int64, error) {
	id := s.ID(name)
	request := func() int64 {
		switch holder, held := s.holder[id]; {
		case held && holder == session && s.ReRequestGrants:
			s.depth[id]++
			return dbmslock.LockSuccess
		case held && holder == session:
			return dbmslock.LockAlreadyOwned
		case held:
			return dbmslock.LockTimeout
		default:
			s.holder[id], s.depth[id], s.since[id] = session, 1, time.Now()
			return dbmslock.LockSuccess
		}
	}
	release := func() int64 {
		if holder, held := s.holder[id]; held && holder == session {
			if s.depth[id]--; s.depth[id] <= 0 {
				s.free(id)
			}
			return dbmslock.LockSuccess
		}
		return dbmslock.LockAlreadyOwned
	}
	switch call {
	case "trylock":
		return request(), nil
	case "unlock":
		return release(), nil
	case "holds":
		rc := request()
		if rc == dbmslock.LockSuccess {
			release()
		}
		return rc, nil
	case "lock":
		// REQUEST's timeout is an INTEGER of seconds, below MAXWAIT
		// (which would wait forever).
		secs, ok := timeout.(int64)
		if !ok || secs < 0 || secs >= dbmslock.MaxWait {
			return 0, fmt.Errorf("simulator: REQUEST timeout %#v is not whole seconds below MAXWAIT", timeout)
		}
		s.waits = append(s.waits, secs)
		if s.WaitCode != nil {
			return *s.WaitCode, nil
		}
		if rc := request(); rc != dbmslock.LockTimeout {
			return rc, nil
		}
		granted, err := s.changes.Await(ctx, mu, time.Duration(secs)*time.Second, func() bool { return request() != dbmslock.LockTimeout })
		switch {
		case err != nil:
			return 0, err
		case granted:
			return dbmslock.LockSuccess, nil
		}
		return dbmslock.LockTimeout, nil
	}
	return 0, fmt.Errorf("simulator: no DBMS_LOCK block %q", call)
}

// free frees the lock id and wakes the REQUESTs waiting.
func (s *Server) free(id int64) {
	delete(s.holder, id)
	delete(s.depth, id)
	delete(s.since, id)
	s.changes.Notify()
}

// End frees every lock of session, as the server does when it ends.
func (s *Server) End(session int64) {
	for id, holder := range s.holder {
		if holder == session {
			s.free(id)
		}
	}
	s.changes.Notify()
}

// Holder returns the session holding name's lock.
func (s *Server) Holder(name string) (session int64, held bool) {
	id, ok := s.allocated[name]
	if !ok {
		return 0, false
	}
	session, held = s.holder[id]
	return session, held
}

// Locks returns the locks held, by name.
func (s *Server) Locks() []Lock {
	var out []Lock
	for name, id := range s.allocated {
		if session, held := s.holder[id]; held {
			out = append(out, Lock{Name: name, ID: id, Session: session, Since: s.since[id]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Held returns the number of locks held.
func (s *Server) Held() int { return len(s.holder) }

// HeldBy returns the number of locks session holds.
func (s *Server) HeldBy(session int64) int {
	n := 0
	for _, holder := range s.holder {
		if holder == session {
			n++
		}
	}
	return n
}

// Waits returns the timeouts of the REQUESTs that waited, in order.
func (s *Server) Waits() []int64 { return append([]int64(nil), s.waits...) }
