package dialects

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

// lockConn is one lock connection of a SessionLocker. One goroutine
// (serve) owns it: it runs the queued statements one at a time and, while
// there is none, watches the connection (a blocking read of its socket,
// and a ping when idle for CheckEvery).
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

	pending atomic.Int32 // statements asked for and not finished
	busy    atomic.Bool  // a statement is running

	mu      sync.Mutex // guards queue, peeking, lost
	queue   []*connOp
	peeking bool  // serve is in the blocking read of sock
	lost    error // why the connection was given up; nil while usable
	wake    chan struct{}

	leases   map[*sessionLease]struct{} // guarded by l.mu
	finished chan struct{}              // closed when serve has returned
}

// connOp is one statement to run on the connection.
type connOp struct {
	run      func(ctx context.Context) error
	patience time.Duration
	done     chan struct{}
	err      error
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
	c := &lockConn{l: l, conn: conn, stmts: stmts, wake: make(chan struct{}, 1), leases: map[*sessionLease]struct{}{}, finished: make(chan struct{})}
	if s, ok := l.Ops.(SessionSocket); ok {
		_ = conn.Raw(func(dc any) error {
			if nc, found := s.NetConn(dc); found && canWatch(nc) {
				c.sock = nc
			}
			return nil
		})
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
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

// do runs fn on the connection and waits for it, or for ctx. The caller
// has counted the statement in pending. When ctx ends first, fn still
// runs; abandon, when set, is then called after it (on the connection's
// goroutine) with fn's error.
func (c *lockConn) do(ctx context.Context, patience time.Duration, fn func(ctx context.Context) error, abandon func(error)) error {
	op := &connOp{run: fn, patience: patience, done: make(chan struct{})}
	// state: 0 running or queued, 1 finished, 2 abandoned by the caller.
	var state atomic.Int32
	inner := op.run
	op.run = func(ctx context.Context) error {
		err := inner(ctx)
		if !state.CompareAndSwap(0, 1) && abandon != nil {
			abandon(err)
		}
		return err
	}
	c.mu.Lock()
	if c.lost != nil {
		err := c.lost
		c.mu.Unlock()
		c.pending.Add(-1)
		return errConnGone{err}
	}
	c.queue = append(c.queue, op)
	if c.peeking {
		_ = c.sock.SetReadDeadline(time.Now()) // end the blocking read
	}
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	select {
	case <-op.done:
		return op.err
	case <-ctx.Done():
		if state.CompareAndSwap(0, 2) {
			return ctx.Err()
		}
		<-op.done // finished meanwhile: its result stands
		return op.err
	}
}

// serve runs the queued statements and watches the idle connection until
// it is given up, then closes it.
func (c *lockConn) serve() {
	defer close(c.finished)
	defer c.shutdown()
	every := c.l.checkEvery()
	lastUsed := time.Now()
	emptySince := time.Now()
	for {
		c.mu.Lock()
		if c.lost != nil {
			queue := c.queue
			c.queue = nil
			lost := c.lost
			c.mu.Unlock()
			for _, op := range queue {
				op.err = errConnGone{lost}
				c.pending.Add(-1)
				close(op.done)
			}
			return
		}
		if len(c.queue) > 0 {
			op := c.queue[0]
			c.queue = c.queue[1:]
			c.mu.Unlock()
			c.execute(op)
			lastUsed, emptySince = time.Now(), time.Now()
			continue
		}
		now := time.Now()
		if !now.Before(lastUsed.Add(every)) {
			c.mu.Unlock()
			if c.hasLeasesOrWork() {
				emptySince = now
			} else if now.Sub(emptySince) >= c.l.idleLinger() && c.l.idleExpired(c) {
				c.lose(errors.New("closed after holding no lock for a while"))
				continue
			}
			c.ping()
			lastUsed = time.Now()
			continue
		}
		next := lastUsed.Add(every)
		watching := c.sock != nil
		if watching {
			_ = c.sock.SetReadDeadline(next)
			c.peeking = true
		}
		c.mu.Unlock()
		if !watching {
			t := time.NewTimer(time.Until(next))
			select {
			case <-c.wake:
			case <-t.C:
			}
			t.Stop()
			continue
		}
		state, err := peek(c.sock)
		c.mu.Lock()
		c.peeking = false
		_ = c.sock.SetReadDeadline(time.Time{})
		c.mu.Unlock()
		switch state {
		case sockClosed:
			c.lose(fmt.Errorf("the server closed the connection: %w", err))
		case sockData:
			// Nothing was asked, yet the server speaks: it is about to
			// close the connection (a FATAL error, a kill notice).
			c.ping()
			lastUsed = time.Now()
		}
	}
}

// hasLeasesOrWork reports whether c holds a lock or has statements asked
// for; idleExpired already took an empty connection out of routing.
func (c *lockConn) hasLeasesOrWork() bool {
	c.l.mu.Lock()
	defer c.l.mu.Unlock()
	return len(c.leases) > 0 || c.load() > 0
}

// execute runs op under its patience: a statement unanswered in time
// gives the connection up.
func (c *lockConn) execute(op *connOp) {
	patience := op.patience
	if patience <= 0 {
		patience = c.l.patience()
	}
	t := time.AfterFunc(patience, func() {
		c.lose(fmt.Errorf("no answer from the server within %s", patience.Round(time.Millisecond)))
	})
	c.busy.Store(true)
	op.err = op.run(c.ctx)
	c.busy.Store(false)
	t.Stop()
	if lost := c.lostErr(); lost != nil && op.err != nil {
		op.err = errConnGone{lost}
	}
	c.pending.Add(-1)
	close(op.done)
}

// ping proves the connection answers; a failure gives it up.
func (c *lockConn) ping() {
	c.pending.Add(1)
	run := func(ctx context.Context) error { return c.conn.PingContext(ctx) }
	if p, ok := c.l.Ops.(SessionPinger); ok {
		run = func(ctx context.Context) error { return p.Ping(ctx, c.conn) }
	}
	op := &connOp{run: run, done: make(chan struct{})}
	c.execute(op)
	if op.err != nil {
		c.lose(fmt.Errorf("ping: %w", op.err))
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
	if c.sock != nil && c.busy.Load() {
		// Unblock a statement stuck on a silent network.
		_ = c.sock.SetDeadline(time.Now())
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// close gives up a connection that holds no lock.
func (c *lockConn) close() { c.lose(errors.New("closed")) }

// shutdown frees the statements and closes the physical connection.
func (c *lockConn) shutdown() {
	_ = c.stmts.Close()
	discard(c.conn)
}

// tryLock runs TryLock; route counted it in pending. A lock granted after
// the caller gave up is released at once.
func (c *lockConn) tryLock(ctx context.Context, name string) (bool, error) {
	var granted bool
	err := c.do(ctx, 0, func(ctx context.Context) error {
		ok, err := c.stmts.TryLock(ctx, name)
		granted = ok
		return err
	}, func(err error) {
		if err == nil && granted {
			if ok, uerr := c.stmts.Unlock(c.ctx, name); uerr != nil || !ok {
				c.lose(fmt.Errorf("could not free a lock whose acquire was abandoned"))
			}
		}
	})
	if err != nil {
		// Abandoned or failed: granted belongs to the connection's
		// goroutine, which may still be writing it.
		return false, err
	}
	return granted, nil
}

// wait runs the server-side wait on c, which holds no lock. When ctx ends
// during the wait the connection is given up, which frees anything the
// wait might have been granted.
func (c *lockConn) wait(ctx context.Context, w SessionWaiter, name string, wait time.Duration) (bool, error) {
	var granted bool
	c.pending.Add(1)
	stop := context.AfterFunc(ctx, func() { c.lose(fmt.Errorf("wait abandoned: %w", context.Cause(ctx))) })
	defer stop()
	err := c.do(context.WithoutCancel(ctx), wait+c.l.patience(), func(sctx context.Context) error {
		ok, err := w.Lock(sctx, c.conn, name, wait)
		granted = ok
		return err
	}, nil)
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	return granted && err == nil, err
}
