package zookeeper_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/lock"
)

// The library opens a zk:// DSN like any other: lock.Open, the table
// strategy by recommendation, WithLock, and the fencing token.
func TestLibraryOpen(t *testing.T) {
	table := checks.NewPrefix()
	raw := withParams(liveDSN(t), "x-table="+table)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	db, err := lock.Open(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.Strategy() != lock.StrategyTable || db.Info().Product != "zookeeper" {
		t.Fatalf("strategy %s, product %s", db.Strategy(), db.Info().Product)
	}
	if err := db.CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b := openLive(t, liveDSN(t))
		tl, _ := b.LeaseLocker(dialects.Table{Name: table})
		_ = tl.(interface{ DropTable(context.Context) error }).DropTable(context.Background())
	})
	ran := false
	err = lock.WithLock(ctx, db, "nightly", lock.Options{AtMost: time.Minute}, func(ctx context.Context, lease lock.Lease) error {
		if _, ok := lease.Token(); !ok {
			return errors.New("no fencing token")
		}
		if _, err := db.Acquire(ctx, "nightly", lock.Options{}); !errors.Is(err, lock.ErrHeld) {
			return errors.New("a second acquire was not refused")
		}
		ran = true
		return nil
	})
	if err != nil || !ran {
		t.Fatalf("WithLock: %v (ran %v)", err, ran)
	}
}
