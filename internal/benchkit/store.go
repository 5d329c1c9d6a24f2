package benchkit

import (
	"context"
	"fmt"
)

// StoreRoundTrip measures the physical limit of a store: ops.RoundTrip
// one after the other on ops' client.
func StoreRoundTrip(ctx context.Context, ops StoreOps, b Budget) (Rate, error) {
	r, err := loop(b, func() error { return ops.RoundTrip(ctx) })
	if err != nil {
		err = fmt.Errorf("round trip: %w", err)
	}
	return r, err
}

// rawStoreCycle is one raw cycle: ops.TryLock then ops.Unlock of name on
// ops' client, the raw commands a store's locker competes with. A refused
// TryLock is an error: name must be free.
func rawStoreCycle(ctx context.Context, ops StoreOps, name string) func() error {
	return func() error {
		ok, err := ops.TryLock(ctx, name)
		if err != nil {
			return fmt.Errorf("raw try-lock: %w", err)
		}
		if !ok {
			return fmt.Errorf("raw try-lock of %q was refused: another client holds it", name)
		}
		if err := ops.Unlock(context.WithoutCancel(ctx), name); err != nil {
			return fmt.Errorf("raw unlock: %w", err)
		}
		return nil
	}
}

// RawStoreContention measures workers clients, each opened by open and
// closed at the end, looping on the raw TryLock of name, and Unlock after
// each success.
func RawStoreContention(ctx context.Context, open func(ctx context.Context) (StoreOps, error), name string, workers int, b Budget) (Contended, error) {
	clients := make([]StoreOps, 0, workers)
	defer func() {
		for _, c := range clients {
			closeOps(c)
		}
	}()
	for range workers {
		c, err := open(ctx)
		if err != nil {
			return Contended{}, err
		}
		clients = append(clients, c)
	}
	return contend(ctx, workers, b, false, func(mctx context.Context, worker int, t *tally) {
		ops := clients[worker]
		for t.m.more() && mctx.Err() == nil {
			ok, err := ops.TryLock(mctx, name)
			switch {
			case err != nil && mctx.Err() != nil:
				return
			case err != nil:
				t.fail(fmt.Errorf("raw try-lock: %w", err))
				return
			case !ok:
				t.refusals.Add(1)
				continue
			}
			if err := ops.Unlock(context.WithoutCancel(mctx), name); err != nil {
				t.fail(fmt.Errorf("raw unlock: %w", err))
				return
			}
			t.success()
		}
	})
}
