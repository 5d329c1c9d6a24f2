package nats_test

import (
	"context"
	"testing"
	"time"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
)

// TestEndedLeasesForgotten: the backend forgets a lease once it ends, a
// release or an expiry nobody watched (no Done, no Err), so a process
// that lets leases run out keeps none of them.
func TestEndedLeasesForgotten(t *testing.T) {
	b := open(t, embedded(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, err := b.LeaseLocker(dialects.Table{Name: checks.NewPrefix() + "_forget"})
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := l.(dialects.TableCreator); ok {
		if err := c.CreateTable(ctx); err != nil {
			t.Fatal(err)
		}
	}
	released, err := l.Acquire(ctx, "released", dialects.Options{AtMost: time.Minute, Owner: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(ctx, "runs-out", dialects.Options{AtMost: 100 * time.Millisecond, Owner: "a"}); err != nil {
		t.Fatal(err)
	}
	if n := b.Tracked(); n != 2 {
		t.Fatalf("%d leases tracked, want 2", n)
	}
	if err := released.Release(ctx); err != nil {
		t.Fatal(err)
	}
	for b.Tracked() != 0 {
		select {
		case <-ctx.Done():
			t.Fatalf("%d leases still tracked after their end", b.Tracked())
		case <-time.After(10 * time.Millisecond):
		}
	}
}
