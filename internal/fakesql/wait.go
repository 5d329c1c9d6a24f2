package fakesql

import (
	"context"
	"sync"
	"time"
)

// Changes lets a simulated server block a statement until another
// session changes its state, as a server-side lock wait does: the waiting
// statement (sp_getapplock with @LockTimeout, DBMS_LOCK.REQUEST with a
// timeout) is answered the moment the lock is released, not at a poll.
// The zero value is ready to use.
type Changes struct {
	mu sync.Mutex
	ch chan struct{}
}

// Notify wakes every statement blocked in Await. Call it with the
// simulator's lock held, right after the change (a lock released, a
// session ended).
func (c *Changes) Notify() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch != nil {
		close(c.ch)
		c.ch = nil
	}
}

// next is the channel the next Notify closes.
func (c *Changes) next() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch == nil {
		c.ch = make(chan struct{})
	}
	return c.ch
}

// Await runs try, with locker held as the caller holds it, until try
// reports true, wait has passed or ctx has ended. Between tries locker is
// released and Await sleeps until the next Notify. It answers true when
// try did, false when the wait ran out (try having failed once more at
// its end), and ctx.Err() when ctx ended first, as a cancelled statement
// does. The caller holds locker on entry and holds it again on return.
func (c *Changes) Await(ctx context.Context, locker sync.Locker, wait time.Duration, try func() bool) (bool, error) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		// Taken before try, under locker: a change made after try failed
		// closes this channel, so no Notify is missed.
		changed := c.next()
		if try() {
			return true, nil
		}
		locker.Unlock()
		var err error
		expired := false
		select {
		case <-changed:
		case <-timer.C:
			expired = true
		case <-ctx.Done():
			err = ctx.Err()
		}
		locker.Lock()
		switch {
		case err != nil:
			return false, err
		case expired:
			return try(), nil
		}
	}
}
