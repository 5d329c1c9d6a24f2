package redis

import (
	"context"
	"errors"

	"github.com/schedlock/schedlock/dialects"
)

var _ dialects.Pauser = (*Backend)(nil)

// pauseLocker is the lease locker of t for Pause and Resume
// (dialects.LeasePauser): a pause on Redis's key of the lock, so every
// node — a ShedLock node too, on the shedlock preset — finds the lock
// taken until it ends; a prefix without keys is free locks, not a
// missing table.
func (b *Backend) pauseLocker(t dialects.Table) (dialects.LeaseLocker, error) {
	tl, err := b.LeaseLocker(t)
	if err != nil {
		return nil, err
	}
	return keysNeedNoTable{tl}, nil
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
