package redis

import (
	"context"
	"errors"

	"github.com/schedlock/schedlock/dialects"
)

var _ dialects.Pauser = (*Backend)(nil)

// Pause implements dialects.Pauser: the pause is a lease of the pause
// owner on the lock's own key (dialects.PauseLock), so schedlock and
// ShedLock nodes alike find the lock taken until it ends.
func (b *Backend) Pause(ctx context.Context, t dialects.Table, name string, req dialects.PauseRequest) error {
	tl, err := b.LeaseLocker(t)
	if err != nil {
		return err
	}
	return dialects.Wrap(Name, "pause", dialects.PauseLock(ctx, keysNeedNoTable{tl}, name, req))
}

// Resume implements dialects.Pauser: the pause lease is released under
// the owner check (dialects.ResumeLock).
func (b *Backend) Resume(ctx context.Context, t dialects.Table, name string) error {
	tl, err := b.LeaseLocker(t)
	if err != nil {
		return err
	}
	return dialects.Wrap(Name, "resume", dialects.ResumeLock(ctx, keysNeedNoTable{tl}, name))
}

// keysNeedNoTable reads a prefix without any key as free locks, not as a
// missing table: a pause on a fresh Redis needs nothing created first.
type keysNeedNoTable struct{ dialects.LeaseLocker }

func (k keysNeedNoTable) Inspect(ctx context.Context, name string) (dialects.Row, bool, error) {
	row, found, err := k.LeaseLocker.Inspect(ctx, name)
	if errors.Is(err, dialects.ErrNoTable) {
		return row, false, nil
	}
	return row, found, err
}
