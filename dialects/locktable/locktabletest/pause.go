package locktabletest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// RunPause pauses and resumes a lock on db with the table strategy's own
// statements, in the default table (created here): a pause longer than
// MaxPause is refused and writes nothing, a paused lock is
// refused with the pause, the same pauser may pause again, a second
// resume finds nothing paused, and a resumed lock is taken again.
func RunPause(t *testing.T, db *sqlkit.DB) {
	t.Helper()
	ctx := t.Context()
	tl, err := db.TableLocker(dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Pause(ctx, dialects.Table{}, "job", dialects.PauseRequest{By: "alice", For: dialects.MaxPause + time.Millisecond}); !errors.Is(err, dialects.ErrInvalid) {
		t.Fatalf("a pause longer than MaxPause = %v, want ErrInvalid", err)
	}
	if _, found, err := tl.Inspect(ctx, "job"); err != nil || found {
		t.Fatalf("a refused pause left a row: %v, %v", found, err)
	}
	if err := db.Pause(ctx, dialects.Table{}, "job", dialects.PauseRequest{By: "alice", For: time.Hour}); err != nil {
		t.Fatal(err)
	}
	_, err = tl.Acquire(ctx, "job", dialects.Options{Owner: "node-a"})
	if !errors.Is(err, dialects.ErrPaused) || !errors.Is(err, dialects.ErrHeld) || !strings.Contains(err.Error(), "paused by alice until") {
		t.Fatalf("acquire of a paused lock = %v", err)
	}
	if err := db.Pause(ctx, dialects.Table{}, "job", dialects.PauseRequest{By: "alice", For: 2 * time.Hour}); err != nil {
		t.Fatalf("the same pauser again: %v", err)
	}
	if err := db.Resume(ctx, dialects.Table{}, "job"); err != nil {
		t.Fatal(err)
	}
	if err := db.Resume(ctx, dialects.Table{}, "job"); !errors.Is(err, dialects.ErrNotPaused) {
		t.Errorf("second resume = %v", err)
	}
	lease, err := tl.Acquire(ctx, "job", dialects.Options{Owner: "node-a"})
	if err != nil {
		t.Fatalf("acquire after resume: %v", err)
	}
	_ = lease.Release(ctx)
}
