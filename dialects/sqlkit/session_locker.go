package sqlkit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// Defaults of the SessionLocker.
const (
	// DefaultCheckEvery is how often an idle lock connection is pinged.
	DefaultCheckEvery = time.Second
	// DefaultMaxConns bounds the lock connections one SessionLocker
	// spreads its locks over.
	DefaultMaxConns = 4
	// DefaultPartitionBound is how long after the last statement it
	// received the server frees the locks of a lock connection whose
	// client has vanished without closing it (a network partition).
	DefaultPartitionBound = 30 * time.Second
	// DefaultIdleLinger is how long a lock connection that holds no lock
	// stays open for the next one.
	DefaultIdleLinger = 2 * time.Second
)

// SessionLocker is the Locker for the session strategy, shared by every
// dialect. It multiplexes any number of locks over a few dedicated lock
// connections taken from DB and never given back to its pool (at the end
// they are closed, which frees whatever they might still hold):
//
//   - Routing: a new lock goes to the lock connection with the fewest
//     statements queued (then the fewest locks), a new connection being
//     opened while fewer than MaxConns exist and every one is busy. A lock
//     is released on the connection that holds it, with a statement that
//     frees that lock only, so the other locks of the connection stay held.
//   - One lock per name per process: a name (or a name with the same
//     SessionKeyer key) held by one lease of this locker is refused to any
//     other at once, without a round trip, and handed over in process on
//     release. Advisory locks stack and GET_LOCK is re-entrant within a
//     session, so without this two leases of one process could share a
//     lock; the dialect's TryLock also refuses a lock its session already
//     holds under another spelling.
//   - Statements on one connection run one at a time, in the order they
//     were asked for, each on its caller's goroutine (no hand-off to
//     another goroutine on the way to the server and back); each is one
//     round trip (SessionPreparer). The caller's context bounds how long
//     it waits for the connection, never a statement once sent:
//     cancelling it would make the driver close the connection and free
//     every lock on it. A statement unanswered within its patience gives
//     the connection up instead.
//   - Waiting (Options.Wait) uses the server's own blocking wait
//     (SessionWaiter) on a connection of its own, holding no other lock,
//     so a wait never delays the statements of other locks; once granted,
//     that connection carries the lock like any other. A lock released
//     by this process goes to its waiters at once.
//   - Liveness is watched per connection, never per lock: a connection
//     idle for 20 ms sits in a blocking read of its socket (SessionSocket), so
//     a closed connection (session killed, server restarted, connection
//     cut) ends every lease on it at once; and it is pinged when idle for
//     CheckEvery. A ping or statement unanswered for 3×CheckEvery (a first
//     wait of 1.5×CheckEvery, then as long again before it is given up)
//     ends the connection and its leases: the leases report the loss
//     within 4×CheckEvery of a silent partition. CheckEvery is at most a
//     tenth of PartitionBound.
//   - Silent partitions are bounded on the server too: every lock
//     connection asks the server (SessionGuard) to end it PartitionBound
//     after the last statement, so a partitioned holder's locks are freed
//     within that bound, after its leases reported the loss.
//   - At-least: a Release before Options.AtLeast has passed since the
//     grant returns at once and leaves the lock held on its connection;
//     a timer frees it there once AtLeast has passed (see Freed). A lost
//     connection or Close frees it sooner, as a process's exit does.
//
// A SessionLocker is safe for concurrent use. Close ends its leases and
// closes its connections.
type SessionLocker struct {
	Dialect string
	DB      *sql.DB
	Ops     SessionOps
	// CheckEvery is how often an idle lock connection is pinged (default
	// DefaultCheckEvery, at most PartitionBound/10).
	CheckEvery time.Duration
	// MaxConns bounds the lock connections used for locks taken at once
	// (default DefaultMaxConns). A waiting Acquire uses a connection of its
	// own while it waits.
	MaxConns int
	// PartitionBound is how soon the server frees the locks of a client
	// that vanished without closing its connection (default
	// DefaultPartitionBound).
	PartitionBound time.Duration
	// IdleLinger is how long a lock connection holding no lock stays open
	// (default DefaultIdleLinger).
	IdleLinger time.Duration

	mu      sync.Mutex
	conns   []*lockConn           // routed lock connections
	waiting map[*lockConn]bool    // connections busy with a server-side wait
	held    map[string]*heldEntry // by lock key: this process holds or is taking it
	opening int                   // connections being opened for routing
	closed  bool
	// holds are the released locks kept for their at-least, each freed by
	// its timer; holding counts them until each is freed or dropped
	// (db_session_hold.go).
	holds   map[*sessionLease]*time.Timer
	holding sync.WaitGroup
}

// heldEntry is a lock key this process holds (lease set) or is acquiring.
type heldEntry struct {
	lease *sessionLease
	freed chan struct{} // closed when the key is free in this process
}

var _ dialects.Locker = (*SessionLocker)(nil)

// Strategy reports StrategySession.
func (l *SessionLocker) Strategy() dialects.Strategy { return dialects.StrategySession }

// partitionBound is PartitionBound or its default.
func (l *SessionLocker) partitionBound() time.Duration {
	if l.PartitionBound > 0 {
		return l.PartitionBound
	}
	return DefaultPartitionBound
}

// checkEvery is the idle ping interval: CheckEvery or its default, at most
// a tenth of the partition bound.
func (l *SessionLocker) checkEvery() time.Duration {
	every := l.CheckEvery
	if every <= 0 {
		every = DefaultCheckEvery
	}
	if limit := l.partitionBound() / 10; every > limit {
		every = limit
	}
	return every
}

// patience is how long a statement may go unanswered before its
// connection is given up: a first wait of 1.5×CheckEvery and a second one
// as long.
func (l *SessionLocker) patience() time.Duration { return 3 * l.checkEvery() }

// maxConns is MaxConns (default DefaultMaxConns), and on a pool whose
// connections are limited (SetMaxOpenConns, x-max-conns) at most one less
// than the limit, so that a statement outside the lock connections (a
// table read, a waiting acquire) can still get one.
func (l *SessionLocker) maxConns() int {
	n := DefaultMaxConns
	if l.MaxConns > 0 {
		n = l.MaxConns
	}
	if limit := l.DB.Stats().MaxOpenConnections; limit > 0 {
		n = min(n, max(limit-1, 1))
	}
	return n
}

func (l *SessionLocker) idleLinger() time.Duration {
	if l.IdleLinger > 0 {
		return l.IdleLinger
	}
	return DefaultIdleLinger
}

// key is the server's identity of name's lock.
func (l *SessionLocker) key(name string) string {
	if k, ok := l.Ops.(SessionKeyer); ok {
		return k.LockKey(name)
	}
	return name
}

// Conns is the number of lock connections open now, waiting ones
// included.
func (l *SessionLocker) Conns() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns) + len(l.waiting)
}

// Acquire implements Locker. A refusal is one round trip and names no
// holder (the backend's LockAdmin finds it).
func (l *SessionLocker) Acquire(ctx context.Context, name string, opts dialects.Options) (dialects.Lease, error) {
	if err := dialects.CheckName(name); err != nil {
		return nil, err
	}
	if err := l.CheckLockName(name); err != nil {
		return nil, dialects.Wrap(l.Dialect, "acquire", err)
	}
	opts, err := opts.Normalize()
	if err != nil {
		return nil, err
	}
	key := l.key(name)
	deadline := time.Now().Add(opts.Wait)
	for {
		entry, freed, err := l.reserve(key)
		if err != nil {
			return nil, dialects.Wrap(l.Dialect, "acquire", err)
		}
		if entry == nil { // held in this process
			if !time.Now().Before(deadline) {
				return nil, dialects.Wrap(l.Dialect, "acquire", &dialects.HeldError{Name: name})
			}
			if err := waitFreed(ctx, freed, deadline); err != nil {
				return nil, dialects.Wrap(l.Dialect, "acquire", err)
			}
			continue
		}
		lease, err := l.take(ctx, entry, key, name, opts, deadline)
		if err != nil || lease != nil {
			return lease, err
		}
		// Refused on the server and the wait is not over: without a
		// server-side wait, poll.
		if err := sleepCtx(ctx, opts.RetryEvery, deadline); err != nil {
			return nil, dialects.Wrap(l.Dialect, "acquire", err)
		}
	}
}

// take tries key on a lock connection and, when refused and Wait allows,
// waits for it on the server. It returns (nil, nil) when the lock was
// refused, the wait is not over and the database has no server-side wait.
func (l *SessionLocker) take(ctx context.Context, entry *heldEntry, key, name string, opts dialects.Options, deadline time.Time) (dialects.Lease, error) {
	// A waiting acquire with a lock connection to spare (holding no lock,
	// nothing queued) goes straight to the server's wait on it, which
	// grants a free lock at once: one statement, where a try first would
	// cost a refused try and then the wait. A wait shorter than a server
	// may round it to (whole seconds) tries first, as does an acquire
	// that would need a new connection for its wait.
	if waiter, canWait := l.Ops.(SessionWaiter); canWait && time.Until(deadline) >= waitRounding {
		if wc := l.spareConn(); wc != nil {
			return l.waitOn(ctx, wc, waiter, entry, key, name, opts, deadline)
		}
	}
	c, err := l.route(ctx)
	if err != nil {
		l.unreserve(key, entry)
		return nil, dialects.Wrap(l.Dialect, "acquire", err)
	}
	granted, err := c.tryLock(ctx, name)
	if err != nil {
		l.unreserve(key, entry)
		return nil, dialects.Wrap(l.Dialect, "acquire", err)
	}
	if granted {
		return l.grant(c, entry, key, name, opts), nil
	}
	waiter, canWait := l.Ops.(SessionWaiter)
	if time.Until(deadline) <= 0 {
		l.unreserve(key, entry)
		return nil, dialects.Wrap(l.Dialect, "acquire", &dialects.HeldError{Name: name})
	}
	if !canWait {
		l.unreserve(key, entry)
		return nil, nil
	}
	wc, err := l.waitConn(ctx)
	if err != nil {
		l.unreserve(key, entry)
		return nil, dialects.Wrap(l.Dialect, "acquire", err)
	}
	return l.waitOn(ctx, wc, waiter, entry, key, name, opts, deadline)
}

// waitOn waits on the server for key on wc, a connection taken out of
// routing for the wait (waitConn, spareConn), until deadline.
func (l *SessionLocker) waitOn(ctx context.Context, wc *lockConn, waiter SessionWaiter, entry *heldEntry, key, name string, opts dialects.Options, deadline time.Time) (dialects.Lease, error) {
	granted, err := wc.wait(ctx, waiter, name, time.Until(deadline))
	l.endWait(wc, granted && err == nil)
	switch {
	case err != nil:
		l.unreserve(key, entry)
		return nil, dialects.Wrap(l.Dialect, "acquire", err)
	case !granted:
		l.unreserve(key, entry)
		return nil, dialects.Wrap(l.Dialect, "acquire", &dialects.HeldError{Name: name})
	}
	return l.grant(wc, entry, key, name, opts), nil
}

// reserve marks key as being acquired by this process. When another
// lease of the process holds or is taking it, it returns a nil entry and
// the channel closed when the key is free again.
func (l *SessionLocker) reserve(key string) (*heldEntry, <-chan struct{}, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, nil, errors.New("the session locker is closed")
	}
	if l.held == nil {
		l.held = map[string]*heldEntry{}
	}
	if e, ok := l.held[key]; ok {
		return nil, e.freed, nil
	}
	e := &heldEntry{freed: make(chan struct{})}
	l.held[key] = e
	return e, nil, nil
}

// unreserve frees key in this process and wakes its waiters.
func (l *SessionLocker) unreserve(key string, e *heldEntry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.unreserveLocked(key, e)
}

func (l *SessionLocker) unreserveLocked(key string, e *heldEntry) {
	if l.held[key] == e {
		delete(l.held, key)
		close(e.freed)
	}
}

// grant records the lease of key on c. A lease whose connection was lost
// in the meantime is returned already ended, reporting the loss.
func (l *SessionLocker) grant(c *lockConn, e *heldEntry, key, name string, opts dialects.Options) *sessionLease {
	s := &sessionLease{locker: l, conn: c, key: key, name: name, owner: opts.Owner, entry: e, done: make(chan struct{}),
		granted: time.Now(), atLeast: opts.AtLeast}
	l.mu.Lock()
	e.lease = s
	lost := c.lostErr()
	if lost == nil {
		c.leases[s] = struct{}{}
	} else {
		l.unreserveLocked(key, e) // connLost ran before the lease was recorded
	}
	l.mu.Unlock()
	if lost != nil {
		s.end(dialects.Wrap(l.Dialect, "lease", fmt.Errorf("%w: %v", dialects.ErrLeaseLost, lost)))
	}
	return s
}

// route picks the lock connection for a new lock: the least busy one,
// opening another while fewer than MaxConns exist and all are busy.
func (l *SessionLocker) route(ctx context.Context) (*lockConn, error) {
	l.mu.Lock()
	var best *lockConn
	for _, c := range l.conns {
		if best == nil || c.load() < best.load() {
			best = c
		}
	}
	if best != nil && (best.load() == 0 || len(l.conns)+l.opening >= l.maxConns()) {
		best.pending.Add(1)
		l.mu.Unlock()
		return best, nil
	}
	if best == nil && l.opening > 0 && l.opening >= l.maxConns() {
		l.mu.Unlock()
		// Every slot is being opened: wait for one, then route again.
		if err := sleepCtx(ctx, 5*time.Millisecond, time.Now().Add(time.Hour)); err != nil {
			return nil, err
		}
		return l.route(ctx)
	}
	l.opening++
	l.mu.Unlock()
	c, err := l.openConn(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.opening--
	if err != nil {
		if best != nil {
			best.pending.Add(1)
			return best, nil
		}
		return nil, err
	}
	if l.closed {
		c.close()
		return nil, errors.New("the session locker is closed")
	}
	l.conns = append(l.conns, c)
	c.pending.Add(1)
	return c, nil
}

// waitConn returns a connection for a server-side wait: a routed one that
// holds no lock and has nothing queued, else a new one. It is taken out of
// routing until endWait.
func (l *SessionLocker) waitConn(ctx context.Context) (*lockConn, error) {
	if c := l.spareConn(); c != nil {
		return c, nil
	}
	c, err := l.openConn(ctx)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		c.close()
		return nil, errors.New("the session locker is closed")
	}
	l.waiting[c] = true
	return c, nil
}

// spareConn takes a routed connection that holds no lock and has nothing
// queued out of routing for a wait, or returns nil when there is none.
func (l *SessionLocker) spareConn() *lockConn {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.waiting == nil {
		l.waiting = map[*lockConn]bool{}
	}
	for i, c := range l.conns {
		if len(c.leases) == 0 && c.load() == 0 && c.lostErr() == nil {
			l.conns = append(l.conns[:i], l.conns[i+1:]...)
			l.waiting[c] = true
			return c
		}
	}
	return nil
}

// endWait puts a wait connection back into routing (a connection holding
// the awaited lock always; an empty one while there is room), or closes it.
func (l *SessionLocker) endWait(c *lockConn, granted bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.waiting, c)
	switch {
	case c.lostErr() != nil:
	case l.closed:
		c.close()
	case granted || len(l.conns) < l.maxConns():
		l.conns = append(l.conns, c)
	default:
		c.close()
	}
}

// openConn takes a connection from the pool and makes it a lock
// connection.
func (l *SessionLocker) openConn(ctx context.Context) (*lockConn, error) {
	conn, err := l.DB.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("get connection: %w", dialects.Classify(l.Ops, err))
	}
	c, err := newLockConn(ctx, l, conn)
	if err != nil {
		discard(conn)
		return nil, err
	}
	return c, nil
}

// connLost ends every lease on c, frees their keys and takes c out of
// routing.
func (l *SessionLocker) connLost(c *lockConn, cause error) {
	l.mu.Lock()
	l.dropLocked(c)
	leases := make([]*sessionLease, 0, len(c.leases))
	for s := range c.leases {
		leases = append(leases, s)
		l.dropHoldLocked(s) // its lock went with the connection
		l.unreserveLocked(s.key, s.entry)
	}
	c.leases = map[*sessionLease]struct{}{}
	l.mu.Unlock()
	err := fmt.Errorf("%w: lock connection lost: %v", dialects.ErrLeaseLost, cause)
	for _, s := range leases {
		s.end(dialects.Wrap(l.Dialect, "lease", err))
	}
}

// dropLocked takes c out of routing. l.mu is held.
func (l *SessionLocker) dropLocked(c *lockConn) {
	for i, o := range l.conns {
		if o == c {
			l.conns = append(l.conns[:i], l.conns[i+1:]...)
			break
		}
	}
	delete(l.waiting, c)
}

// released forgets s after its lock was freed on the server.
func (l *SessionLocker) released(s *sessionLease) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(s.conn.leases, s)
	l.unreserveLocked(s.key, s.entry)
}

// idleExpired reports whether c, idle since the caller saw it, may close:
// it holds no lock, has nothing queued, and is not waited on. It is then
// taken out of routing.
func (l *SessionLocker) idleExpired(c *lockConn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(c.leases) > 0 || c.load() > 0 || l.waiting[c] {
		return false
	}
	l.dropLocked(c)
	return true
}

// Close ends every lease of the locker (its locks are freed with their
// connections, which are closed) and refuses new acquires. Locks released
// and still held for their at-least are freed with their connections too,
// at once: Close returns once no goroutine or timer of the locker is left.
func (l *SessionLocker) Close() error {
	l.mu.Lock()
	l.closed = true
	conns := append([]*lockConn(nil), l.conns...)
	for c := range l.waiting {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	for _, c := range conns {
		c.lose(errors.New("the session locker was closed"))
	}
	for _, c := range conns {
		<-c.finished
	}
	l.holding.Wait() // a hold that was freeing its lock as Close began
	return nil
}

// waitFreed waits until freed is closed, the deadline passes or ctx ends.
func waitFreed(ctx context.Context, freed <-chan struct{}, deadline time.Time) error {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-freed:
		return nil
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// sleepCtx pauses for d (not past deadline) or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration, deadline time.Time) error {
	if until := time.Until(deadline); until < d {
		d = until
	}
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ServerWaiter is implemented by Lockers that can tell whether a waiting
// Acquire waits on the server (a release hands the lock over at once) or
// polls every Options.RetryEvery.
type ServerWaiter interface {
	WaitsOnServer() bool
}

// WaitsOnServer reports whether the dialect has a server-side wait
// (SessionWaiter).
func (l *SessionLocker) WaitsOnServer() bool {
	_, ok := l.Ops.(SessionWaiter)
	return ok
}
