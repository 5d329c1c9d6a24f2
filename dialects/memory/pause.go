package memory

import (
	"context"

	"github.com/schedlock/schedlock/dialects"
)

var _ dialects.Pauser = (*Backend)(nil)

// Pause implements dialects.Pauser on the table t, with the kit's
// PauseLock over the table's locker.
func (b *Backend) Pause(ctx context.Context, t dialects.Table, name string, req dialects.PauseRequest) error {
	tl, err := b.LeaseLocker(t)
	if err != nil {
		return err
	}
	return dialects.PauseLock(ctx, tl, name, req)
}

// Resume implements dialects.Pauser on the table t.
func (b *Backend) Resume(ctx context.Context, t dialects.Table, name string) error {
	tl, err := b.LeaseLocker(t)
	if err != nil {
		return err
	}
	return dialects.ResumeLock(ctx, tl, name)
}
