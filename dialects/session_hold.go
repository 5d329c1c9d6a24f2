package dialects

// Holding after release (Options.AtLeast on the session strategy).
//
// A session lock has no lease on the server to carry its at-least, so
// the process carries it: a Release before locked-at + AtLeast ends the
// lease at once (Done closes, Err stays nil, Release returns without a
// round trip) and leaves the lock held on its lock connection; a timer
// frees it there once AtLeast has passed since the grant, with the
// connection's usual unlock, and the connection holding nothing then goes
// back to idling. Meanwhile the lock is still this process's: another
// Acquire of the name in the process is refused (or waits) as while it
// was held, and another process finds it taken on the server.
//
// The hold lasts only as long as the process and the connection do. The
// server frees a session's locks with the session, so a lost lock
// connection, SessionLocker.Close and the process's exit all free a held
// lock at once, before its at-least; a process that must keep it until
// then (one about to exit) waits on Freed first.

// Lingering is implemented by leases that a Release may leave held by
// this process for a while (a session lock released before its AtLeast
// has passed).
type Lingering interface {
	// Freed is closed once this process no longer holds the lease's lock:
	// released and unlocked on the server, or its connection gone.
	Freed() <-chan struct{}
}

// LeaseUnwrapper is implemented by leases that wrap another (a namespaced
// lease, a tracked one), so that Freed reaches the backend's lease.
type LeaseUnwrapper interface {
	Unwrap() Lease
}

// closedChan is the channel Freed returns for leases that hold nothing in
// the process after Release.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// Freed returns a channel that is closed once lease's lock, released, is
// no longer held by this process. For a lease that keeps nothing in the
// process after Release (the table strategy and the lease stores keep
// at-least on the server) it is closed already. On a sys_sched_lock table,
// whose release deletes the row (Schema.ReleaseDeletesRow), an early
// release keeps the row until at-least has passed and the process deletes
// it then: Freed closes after that. A process about to exit
// after a Release waits on it, so that a session lock's at-least is kept.
func Freed(lease Lease) <-chan struct{} {
	for lease != nil {
		if l, ok := lease.(Lingering); ok {
			return l.Freed()
		}
		u, ok := lease.(LeaseUnwrapper)
		if !ok {
			break
		}
		lease = u.Unwrap()
	}
	return closedChan
}
