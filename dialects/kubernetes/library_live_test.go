package kubernetes_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/schedlock/schedlock/lock"
)

// TestLibraryOpen takes a lock through the user API on a Kubernetes DSN:
// the second acquirer is refused, the fencing token is leaseTransitions.
func TestLibraryOpen(t *testing.T) {
	dsn := liveDSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	db, err := lock.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("lock.Open(%s): %v", dsn, err)
	}
	defer db.Close()
	if db.Strategy() != lock.StrategyTable || db.Info().Product != "kubernetes" {
		t.Fatalf("strategy %s, product %s", db.Strategy(), db.Info().Product)
	}
	name := "library-" + lock.NewOwner()
	err = lock.WithLock(ctx, db, name, lock.Options{AtMost: 10 * time.Second}, func(ctx context.Context, lease lock.Lease) error {
		if tok, ok := lease.Token(); !ok || tok <= 0 {
			t.Errorf("token %d, %v; want the Lease's leaseTransitions", tok, ok)
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
