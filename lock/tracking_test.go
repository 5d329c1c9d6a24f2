package lock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/memory"
)

// TestTrackingForgetsEndedLeases: 10,000 cycles of leases released
// through the handle, and 10,000 of leases lost (force-released by an
// administrator, never released by their holder), leave the handle
// tracking nothing, and the set never grows past its pruning bound on
// the way.
func TestTrackingForgetsEndedLeases(t *testing.T) {
	const cycles = 10000
	store := "tracking-" + strings.ReplaceAll(dialects.NewOwner(), ":", "-")
	db := openT(t, "memory://"+store)
	ctx := context.Background()
	if err := db.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < cycles; i++ {
		lease, err := db.Acquire(ctx, "job", Options{})
		if err != nil {
			t.Fatalf("cycle %d: %v", i, err)
		}
		if err := lease.Release(ctx); err != nil {
			t.Fatalf("cycle %d: release: %v", i, err)
		}
	}
	if n := db.tracked(); n != 0 {
		t.Fatalf("%d leases tracked after %d released ones", n, cycles)
	}

	admin, err := memory.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := admin.LeaseLocker(dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	expirer := tl
	maxTracked := 0
	for i := 0; i < cycles; i++ {
		lease, err := db.Acquire(ctx, "job", Options{})
		if err != nil {
			t.Fatalf("cycle %d: %v", i, err)
		}
		if changed, err := expirer.Expire(ctx, "job"); err != nil || !changed {
			t.Fatalf("cycle %d: expire: %v, %v", i, changed, err)
		}
		select {
		case <-lease.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("cycle %d: the force-released lease did not end", i)
		}
		if !errors.Is(lease.Err(), ErrLeaseLost) {
			t.Fatalf("cycle %d: lease error %v, want ErrLeaseLost", i, lease.Err())
		}
		db.mu.Lock()
		maxTracked = max(maxTracked, len(db.held))
		db.mu.Unlock()
	}
	if maxTracked > 2*minPruneAt {
		t.Errorf("up to %d lost leases tracked at once, want at most %d", maxTracked, 2*minPruneAt)
	}
	if n := db.tracked(); n != 0 {
		t.Errorf("%d leases tracked after %d lost ones", n, cycles)
	}

	// A lease still held stays tracked, and Close releases it.
	held, err := db.Acquire(ctx, "held", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := db.tracked(); n != 1 {
		t.Errorf("%d leases tracked with one held, want 1", n)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-held.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not release the held lease")
	}
}
