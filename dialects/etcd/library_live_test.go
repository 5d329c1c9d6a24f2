package etcd_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/lock"
)

// TestLibraryOpen takes a lock through the user API on an etcd DSN: the
// second acquirer is refused, the fencing token is the key's revision.
func TestLibraryOpen(t *testing.T) {
	dsn := liveDSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	db, err := lock.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("lock.Open(%s): %v", dsn, err)
	}
	defer db.Close()
	if db.Strategy() != lock.StrategyTable || db.Info().Product != "etcd" {
		t.Fatalf("strategy %s, product %s", db.Strategy(), db.Info().Product)
	}
	name := "library-" + lock.NewOwner()
	err = lock.WithLock(ctx, db, name, lock.Options{AtMost: 10 * time.Second}, func(ctx context.Context, lease lock.Lease) error {
		if tok, ok := lease.Token(); !ok || tok <= 0 {
			t.Errorf("token %d, %v; want the key's create revision", tok, ok)
		}
		_, err := db.Acquire(ctx, name, lock.Options{})
		if !errors.Is(err, lock.ErrHeld) {
			t.Errorf("second acquire: %v, want ErrHeld", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTinyAtMost: an at-most shorter than the round trip ends the lease
// at once on the holder's side, told as lost, without a race or a panic.
func TestTinyAtMost(t *testing.T) {
	b := openLive(t)
	l, err := b.Locker(dialects.StrategyTable, dialects.Table{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	lease, err := l.Acquire(ctx, "tiny-"+lock.NewOwner(), dialects.Options{AtMost: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-lease.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a 1ms lease did not end")
	}
	if !errors.Is(lease.Err(), dialects.ErrLeaseLost) || !errors.Is(lease.Release(ctx), dialects.ErrLeaseLost) {
		t.Fatalf("Err %v; want lease lost, and the release refused as lost", lease.Err())
	}
}
