package sqlkit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// quietBeforeWatch is how long a lock connection stays unused before its
// goroutine starts watching its socket. While statements follow one
// another more closely, each runs on its caller's goroutine with no
// hand-off to the watcher (a statement's own answer proves the connection
// alive); a connection that closes while idle is noticed within this
// delay of its last statement.
const quietBeforeWatch = 20 * time.Millisecond

// lockConn is one lock connection of a SessionLocker. Whoever holds its
// turn uses it: a statement runs on its caller's goroutine, one at a time,
// in the order the turns were asked for; while no statement is asked for,
// the connection's own goroutine (serve) takes the turn to watch it (a
// blocking read of its socket, and a ping when idle for CheckEvery).
type lockConn struct {
	l     *SessionLocker
	conn  *sql.Conn
	stmts SessionStatements
	sock  net.Conn // the socket under conn; nil when the driver hides it
	// ctx is the context of every statement; it ends only when the
	// connection is given up (cancelling a statement makes the driver
	// close the connection, which frees every lock on it).
	ctx    context.Context
	cancel context.CancelFunc
	// stmtCtx is the context statements run under: ctx, or, when the
	// socket is known, a context that never ends (a statement is then
	// interrupted through the socket's deadline, and the drivers skip
	// the goroutine they start per statement to watch a context).
	stmtCtx context.Context

	turn chan struct{} // holding its one slot is the right to use conn

	pending  atomic.Int32 // statements asked for and not finished
	lastUsed atomic.Int64 // unix nanoseconds of the end of the last statement
	// busyUntil is the patience deadline (unix nanoseconds) of the
	// statement running now, 0 when none runs; watchdog gives the
	// connection up when it passes.
	busyUntil atomic.Int64
	busyFor   atomic.Int64 // the patience of the statement running now
	watchdog  *time.Timer
	// rounds counts the watcher's turns of its loop (serve).
	rounds atomic.Int64

	mu       sync.Mutex // guards peeking, lost, batch, flushing
	peeking  bool       // serve is in the blocking read of sock
	lost     error      // why the connection was given up; nil while usable
	batch    []*batchOp // try-locks and unlocks waiting to be sent
	flushing bool       // a caller is sending the batch
	wake     chan struct{}

	leases   map[*sessionLease]struct{} // guarded by l.mu
	finished chan struct{}              // closed when serve has returned
}

// errConnGone reports a statement that could not run because its
// connection had been given up.
type errConnGone struct{ cause error }

func (e errConnGone) Error() string { return "lock connection lost: " + e.cause.Error() }

// newLockConn prepares conn (session guard, statements, socket) and starts
// its goroutine.
func newLockConn(ctx context.Context, l *SessionLocker, conn *sql.Conn) (*lockConn, error) {
	if g, ok := l.Ops.(SessionGuard); ok {
		if err := g.Guard(ctx, conn, l.partitionBound()); err != nil {
			return nil, fmt.Errorf("set up the lock connection: %w", err)
		}
	}
	var stmts SessionStatements = boundStatements{ops: l.Ops, conn: conn}
	if p, ok := l.Ops.(SessionPreparer); ok {
		s, err := p.Prepare(ctx, conn)
		if err != nil {
			return nil, fmt.Errorf("prepare the lock statements: %w", err)
		}
		stmts = s
	}
	c := &lockConn{l: l, conn: conn, stmts: stmts, turn: make(chan struct{}, 1), wake: make(chan struct{}, 1), leases: map[*sessionLease]struct{}{}, finished: make(chan struct{})}
	if s, ok := l.Ops.(SessionSocket); ok {
		_ = conn.Raw(func(dc any) error {
			if nc, found := s.NetConn(dc); found && canWatch(nc) {
				c.sock = nc
			}
			return nil
		})
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.stmtCtx = c.ctx
	if c.sock != nil {
		c.stmtCtx = context.Background()
	}
	c.watchdog = time.AfterFunc(time.Hour, c.overdue)
	c.watchdog.Stop()
	c.lastUsed.Store(time.Now().UnixNano())
	go c.serve()
	return c, nil
}

// lostErr is why c was given up, or nil.
func (c *lockConn) lostErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lost
}

func (c *lockConn) load() int32 { return c.pending.Load() }

// do runs fn on the connection, on the caller's goroutine, once it has the
// connection's turn. The caller has counted the statement in pending. ctx
// bounds the wait for the turn only: a statement once sent is awaited (its
// patience bounds it: an unanswered statement gives the connection up,
// which unblocks it), since cancelling it would make the driver close the
// connection and free every lock on it. When ctx ends before fn started,
// fn never runs and ctx's error is returned.
func (c *lockConn) do(ctx context.Context, patience time.Duration, fn func(ctx context.Context) error) error {
	defer c.pending.Add(-1)
	if err := c.takeTurn(ctx); err != nil {
		return err
	}
	defer c.giveTurn()
	return c.run(patience, fn)
}

// takeTurn waits for the connection's turn, interrupting the watcher's
// blocking read. pending already counts the caller, so the watcher does
// not start a new read meanwhile (it checks pending under c.mu).
func (c *lockConn) takeTurn(ctx context.Context) error {
	select {
	case c.turn <- struct{}{}:
	default:
		c.mu.Lock()
		if c.lost != nil {
			err := c.lost
			c.mu.Unlock()
			return errConnGone{err}
		}
		if c.peeking {
			_ = c.sock.SetReadDeadline(time.Now()) // end the blocking read
		}
		c.mu.Unlock()
		select {
		case c.turn <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := c.lostErr(); err != nil {
		<-c.turn
		return errConnGone{err}
	}
	return nil
}

func (c *lockConn) giveTurn() { <-c.turn }

// run runs fn, the caller holding the turn, under patience (default the
// locker's): a statement unanswered in time gives the connection up.
func (c *lockConn) run(patience time.Duration, fn func(ctx context.Context) error) error {
	if patience <= 0 {
		patience = c.l.patience()
	}
	c.busyFor.Store(int64(patience))
	c.busyUntil.Store(time.Now().Add(patience).UnixNano())
	if lost := c.lostErr(); lost != nil {
		// Given up between the turn and now: lose may have missed this
		// statement when it interrupted the one running.
		c.busyUntil.Store(0)
		return errConnGone{lost}
	}
	c.watchdog.Reset(patience)
	err := fn(c.stmtCtx)
	c.watchdog.Stop()
	c.busyUntil.Store(0)
	c.lastUsed.Store(time.Now().UnixNano())
	if lost := c.lostErr(); lost != nil && err != nil {
		err = errConnGone{lost}
	}
	return err
}

// overdue runs when the watchdog fires: the statement running now has
// outlived its patience (a stale firing, the statement having ended or a
// later one started, does nothing).
func (c *lockConn) overdue() {
	until := c.busyUntil.Load()
	if until == 0 {
		return
	}
	if late := time.Now().UnixNano() - until; late >= 0 {
		c.lose(fmt.Errorf("no answer from the server within %s", time.Duration(c.busyFor.Load()).Round(time.Millisecond)))
		c.interrupt()
		return
	}
	c.watchdog.Reset(time.Duration(until - time.Now().UnixNano()))
}

// serve watches the connection while no statement is asked for, until it
// is given up, then closes it.
func (c *lockConn) serve() {
	defer close(c.finished)
	every := c.l.checkEvery()
	emptySince := time.Now()
	for {
		c.rounds.Add(1)
		if c.lostErr() != nil {
			c.turn <- struct{}{} // the statement running now, if any, ends first
			c.shutdown()
			<-c.turn
			return
		}
		lastUsed := time.Unix(0, c.lastUsed.Load())
		idle := time.Since(lastUsed)
		if c.load() > 0 {
			// A statement runs (a wait on the server may run for
			// minutes): its answer proves the connection; look again
			// after the quiet delay, not in a spin.
			c.pause(quietBeforeWatch)
			continue
		}
		if idle < quietBeforeWatch {
			c.pause(max(quietBeforeWatch-idle, time.Millisecond))
			continue
		}
		select {
		case c.turn <- struct{}{}:
		default: // a statement runs
			c.pause(quietBeforeWatch)
			continue
		}
		now := time.Now()
		if !now.Before(lastUsed.Add(every)) {
			if c.hasLeasesOrWork() {
				emptySince = now
			} else if now.Sub(emptySince) >= c.l.idleLinger() && c.l.idleExpired(c) {
				c.giveTurn()
				c.lose(errors.New("closed after holding no lock for a while"))
				continue
			}
			c.ping()
			c.giveTurn()
			continue
		}
		next := lastUsed.Add(every)
		if c.sock == nil {
			c.giveTurn()
			c.pause(time.Until(next))
			continue
		}
		c.mu.Lock()
		if c.lost != nil || c.load() > 0 {
			c.mu.Unlock()
			c.giveTurn()
			continue
		}
		_ = c.sock.SetReadDeadline(next)
		c.peeking = true
		c.mu.Unlock()
		state, err := peek(c.sock)
		c.mu.Lock()
		c.peeking = false
		_ = c.sock.SetReadDeadline(time.Time{})
		c.mu.Unlock()
		switch state {
		case sockClosed:
			c.giveTurn()
			c.lose(fmt.Errorf("the server closed the connection: %w", err))
		case sockData:
			// Nothing was asked, yet the server speaks: it is about to
			// close the connection (a FATAL error, a kill notice).
			c.ping()
			c.giveTurn()
		default:
			c.giveTurn()
		}
	}
}

// pause sleeps for d or until lose wakes the watcher.
func (c *lockConn) pause(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.wake:
	case <-t.C:
	}
}

// hasLeasesOrWork reports whether c holds a lock or has statements asked
// for; idleExpired already took an empty connection out of routing.
func (c *lockConn) hasLeasesOrWork() bool {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	return len(c.leases) > 0 || c.load() > 0
}

// ping proves the connection answers; a failure gives it up. The caller
// holds the turn.
func (c *lockConn) ping() {
	run := func(ctx context.Context) error { return c.conn.PingContext(ctx) }
	if p, ok := c.l.Ops.(SessionPinger); ok {
		run = func(ctx context.Context) error { return p.Ping(ctx, c.conn) }
	}
	if err := c.run(0, run); err != nil {
		c.lose(fmt.Errorf("ping: %w", err))
	}
}

// lose gives the connection up: every lease on it ends as lost at once,
// and serve closes it.
func (c *lockConn) lose(cause error) {
	c.mu.Lock()
	if c.lost != nil {
		c.mu.Unlock()
		return
	}
	c.lost = cause
	if c.peeking {
		_ = c.sock.SetReadDeadline(time.Now()) // end the blocking read
	}
	c.mu.Unlock()
	c.l.connLost(c, cause)
	c.cancel()
	if c.busyUntil.Load() != 0 {
		c.interrupt()
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// interrupt unblocks the statement running on a given-up connection
// (stuck on a silent network, or waiting on the server).
func (c *lockConn) interrupt() {
	if c.sock != nil {
		_ = c.sock.SetDeadline(time.Now())
	}
}

// close gives up a connection that holds no lock.
func (c *lockConn) close() { c.lose(errors.New("closed")) }

// shutdown frees the statements and closes the physical connection; the
// caller holds the turn.
func (c *lockConn) shutdown() {
	c.watchdog.Stop()
	_ = c.stmts.Close()
	discard(c.conn)
}

// tryLock runs TryLock, batched with the others asked for meanwhile;
// route counted it in pending.
func (c *lockConn) tryLock(ctx context.Context, name string) (bool, error) {
	return c.batched(ctx, batchTry, name)
}

// waitRounding is the most a server-side wait may outlast the wait asked
// for, on servers that count it in whole seconds.
const waitRounding = time.Second

// wait runs the server-side wait on c, which holds no lock. When ctx ends
// during the wait the connection is given up, which frees anything the
// wait might have been granted.
func (c *lockConn) wait(ctx context.Context, w SessionWaiter, name string, wait time.Duration) (bool, error) {
	var granted bool
	c.pending.Add(1)
	stop := context.AfterFunc(ctx, func() { c.lose(fmt.Errorf("wait abandoned: %w", context.Cause(ctx))) })
	defer stop()
	// Some servers count a wait in whole seconds and round it up (GET_LOCK
	// on MySQL, DBMS_LOCK.REQUEST): allow that second on top of the wait.
	err := c.do(context.WithoutCancel(ctx), wait+waitRounding+c.l.patience(), func(sctx context.Context) error {
		var ok bool
		var err error
		if sw, prepared := c.stmts.(StatementWaiter); prepared {
			ok, err = sw.Lock(sctx, name, wait)
		} else {
			ok, err = w.Lock(sctx, c.conn, name, wait)
		}
		granted = ok
		return err
	})
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	return granted && err == nil, err
}
