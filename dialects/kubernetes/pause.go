package kubernetes

import (
	"context"

	"github.com/schedlock/schedlock/dialects"
)

// Pause implements dialects.Pauser: the pause is a lease of the pause
// owner on the lock's own Lease (dialects.PauseLock), so every node — and
// a client-go LeaderElector on that Lease — finds the lock taken until it
// ends.
func (b *Backend) Pause(ctx context.Context, t dialects.Table, name string, req dialects.PauseRequest) error {
	tl, err := b.LeaseLocker(t)
	if err != nil {
		return err
	}
	return dialects.Wrap(Name, "pause", dialects.PauseLock(ctx, tl, name, req))
}

// Resume implements dialects.Pauser: the pause lease is released under
// the owner check (dialects.ResumeLock).
func (b *Backend) Resume(ctx context.Context, t dialects.Table, name string) error {
	tl, err := b.LeaseLocker(t)
	if err != nil {
		return err
	}
	return dialects.Wrap(Name, "resume", dialects.ResumeLock(ctx, tl, name))
}
