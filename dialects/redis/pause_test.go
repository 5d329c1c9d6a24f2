package redis_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// A pause holds the lock's key for its length: a job is refused, and
// after Resume it gets the lock.
func TestPauseAndResume(t *testing.T) {
	b := openLive(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	table := dialects.Table{Name: "schedlock_pause_" + time.Now().Format("150405.000000")[7:]}
	l, err := b.Locker(dialects.StrategyTable, table)
	if err != nil {
		t.Fatal(err)
	}
	defer l.(dialects.TableDropper).DropTable(context.Background())
	if err := b.Pause(ctx, table, "nightly", dialects.PauseRequest{By: "ops", For: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(ctx, "nightly", dialects.Options{Owner: "job"}); !errors.Is(err, dialects.ErrHeld) {
		t.Fatalf("acquire of a paused lock: %v, want held", err)
	}
	if err := b.Resume(ctx, table, "nightly"); err != nil {
		t.Fatal(err)
	}
	lease, err := l.Acquire(ctx, "nightly", dialects.Options{Owner: "job"})
	if err != nil {
		t.Fatalf("acquire after resume: %v", err)
	}
	_ = lease.Release(ctx)
	if err := b.Resume(ctx, table, "nightly"); !errors.Is(err, dialects.ErrNotPaused) {
		t.Errorf("resume of a lock not paused: %v", err)
	}
}
