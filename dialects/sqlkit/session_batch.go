package sqlkit

import (
	"context"
	"fmt"
	"sync/atomic"
)

// SessionBatcher is implemented by SessionStatements that can take or
// free many locks in one statement. On PostgreSQL every statement ends a
// transaction, and the end of a transaction walks every lock the session
// holds (0.7 ms with 10,000 advisory locks held): locks asked for on one
// lock connection at the same time then cost one statement, not one each.
// Each result answers for the name at the same index.
type SessionBatcher interface {
	TryLockMany(ctx context.Context, names []string) ([]bool, error)
	UnlockMany(ctx context.Context, names []string) ([]bool, error)
}

// maxBatch bounds the locks one batched statement takes or frees.
const maxBatch = 256

// batchKind is what a batched operation does.
type batchKind int

const (
	batchTry batchKind = iota
	batchUnlock
)

// batchOp is one try-lock or unlock waiting for a batched statement.
type batchOp struct {
	kind  batchKind
	name  string
	state atomic.Int32 // opQueued, opTaken, opAbandoned
	ok    bool
	err   error
	done  chan struct{}
}

const (
	opQueued int32 = iota
	opTaken
	opAbandoned
)

// batched runs a try-lock or an unlock of name. Operations asked for while
// another caller holds the connection are run together, by the first of
// them, in as few statements as the statements allow. The caller has
// counted the operation in pending. ctx bounds the wait until the
// operation is sent, never the operation once sent.
func (c *lockConn) batched(ctx context.Context, kind batchKind, name string) (bool, error) {
	defer c.pending.Add(-1)
	c.mu.Lock()
	if c.lost != nil {
		err := c.lost
		c.mu.Unlock()
		return false, errConnGone{err}
	}
	if !c.flushing && len(c.batch) == 0 {
		// Nobody else is asking: run it at once, with nothing to
		// allocate for a batch; what others ask meanwhile queues and is
		// sent right after.
		c.flushing = true
		c.mu.Unlock()
		ok, err := c.single(kind, name)
		c.mu.Lock()
		if len(c.batch) == 0 {
			c.flushing = false
			c.mu.Unlock()
		} else {
			c.mu.Unlock()
			c.flush()
		}
		return ok, err
	}
	op := &batchOp{kind: kind, name: name, done: make(chan struct{})}
	c.batch = append(c.batch, op)
	flusher := !c.flushing
	c.flushing = true
	c.mu.Unlock()
	if flusher {
		c.flush()
		return op.ok, op.err
	}
	select {
	case <-op.done:
		return op.ok, op.err
	case <-ctx.Done():
		if op.state.CompareAndSwap(opQueued, opAbandoned) {
			return false, ctx.Err()
		}
		<-op.done // sent meanwhile: its result stands
		return op.ok, op.err
	}
}

// flush runs the queued operations until none is left. Only one caller
// flushes at a time; it waits for the connection's turn whatever its own
// context, the other callers' operations depending on it.
func (c *lockConn) flush() {
	if err := c.takeTurn(context.Background()); err != nil {
		c.failBatch(err)
		return
	}
	defer c.giveTurn()
	for {
		c.mu.Lock()
		var tries, unlocks []*batchOp
		n := 0
		for n < len(c.batch) && len(tries)+len(unlocks) < maxBatch {
			op := c.batch[n]
			n++
			if !op.state.CompareAndSwap(opQueued, opTaken) {
				continue // abandoned by its caller
			}
			if op.kind == batchTry {
				tries = append(tries, op)
			} else {
				unlocks = append(unlocks, op)
			}
		}
		c.batch = c.batch[n:]
		if n == 0 {
			c.flushing = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		// Frees first: a lock freed here may be the one a try asks for.
		c.runBatch(unlocks, c.unlockMany)
		c.runBatch(tries, c.tryMany)
	}
}

// single runs one try-lock or unlock, the caller being the only one
// asking (it set flushing); an unlock is retried as unlockMany retries.
func (c *lockConn) single(kind batchKind, name string) (bool, error) {
	if err := c.takeTurn(context.Background()); err != nil {
		return false, err
	}
	defer c.giveTurn()
	var ok bool
	err := c.run(0, func(ctx context.Context) error {
		var err error
		if kind == batchTry {
			ok, err = c.stmts.TryLock(ctx, name)
			return err
		}
		ok, err = c.stmts.Unlock(ctx, name)
		if err != nil && c.lostErr() == nil && ctx.Err() == nil {
			ok, err = c.stmts.Unlock(ctx, name)
		}
		if err != nil && c.lostErr() == nil {
			c.lose(fmt.Errorf("release of 1 lock failed twice, connection dropped to free it: %w", err))
		}
		return err
	})
	return ok, err
}

// failBatch ends every queued operation with err.
func (c *lockConn) failBatch(err error) {
	c.mu.Lock()
	ops := c.batch
	c.batch = nil
	c.flushing = false
	c.mu.Unlock()
	for _, op := range ops {
		if op.state.CompareAndSwap(opQueued, opTaken) {
			op.err = err
			close(op.done)
		}
	}
}

// runBatch runs ops, the caller holding the turn, and ends each with its
// result.
func (c *lockConn) runBatch(ops []*batchOp, run func(ctx context.Context, names []string) ([]bool, error)) {
	if len(ops) == 0 {
		return
	}
	names := make([]string, len(ops))
	for i, op := range ops {
		names[i] = op.name
	}
	var results []bool
	err := c.run(0, func(ctx context.Context) error {
		var err error
		results, err = run(ctx, names)
		return err
	})
	if err == nil && len(results) != len(ops) {
		err = fmt.Errorf("a batch of %d lock statements answered %d results", len(ops), len(results))
	}
	for i, op := range ops {
		if err != nil {
			op.err = err
		} else {
			op.ok = results[i]
		}
		close(op.done)
	}
}

// tryMany takes names in one statement when the statements allow it,
// else one after the other.
func (c *lockConn) tryMany(ctx context.Context, names []string) ([]bool, error) {
	if b, ok := c.stmts.(SessionBatcher); ok && len(names) > 1 {
		return b.TryLockMany(ctx, names)
	}
	return each(ctx, names, c.stmts.TryLock)
}

// unlockMany frees names like tryMany takes them, retrying once after an
// error; a batch it cannot free costs the connection (which frees the
// locks) rather than staying held.
func (c *lockConn) unlockMany(ctx context.Context, names []string) ([]bool, error) {
	free := func(ctx context.Context, names []string) ([]bool, error) {
		if b, ok := c.stmts.(SessionBatcher); ok && len(names) > 1 {
			return b.UnlockMany(ctx, names)
		}
		return each(ctx, names, c.stmts.Unlock)
	}
	results, err := free(ctx, names)
	if err != nil && c.lostErr() == nil && ctx.Err() == nil {
		results, err = free(ctx, names)
	}
	if err != nil && c.lostErr() == nil {
		c.lose(fmt.Errorf("release of %d lock(s) failed twice, connection dropped to free them: %w", len(names), err))
	}
	return results, err
}

// each runs fn for every name, stopping at the first error.
func each(ctx context.Context, names []string, fn func(ctx context.Context, name string) (bool, error)) ([]bool, error) {
	results := make([]bool, len(names))
	for i, name := range names {
		ok, err := fn(ctx, name)
		if err != nil {
			return nil, err
		}
		results[i] = ok
	}
	return results, nil
}
