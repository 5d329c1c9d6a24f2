package sqlkit

import (
	"context"

	"github.com/schedlock/schedlock/dialects"
)

// Pause implements Pauser on the lease table t.
func (db *DB) Pause(ctx context.Context, t dialects.Table, name string, req dialects.PauseRequest) error {
	tl, err := db.TableLocker(t)
	if err != nil {
		return err
	}
	return dialects.Wrap(db.Dialect.Name, "pause", dialects.PauseLock(ctx, tl, name, req))
}

// Resume implements Pauser on the lease table t.
func (db *DB) Resume(ctx context.Context, t dialects.Table, name string) error {
	tl, err := db.TableLocker(t)
	if err != nil {
		return err
	}
	return dialects.Wrap(db.Dialect.Name, "resume", dialects.ResumeLock(ctx, tl, name))
}

var _ dialects.Pauser = (*DB)(nil)
var _ dialects.NameChecker = (*SessionLocker)(nil)
