package redis_test

import (
	"context"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
)

// The scripts are sent by EVAL once and run by hash after; a server that
// forgot them (SCRIPT FLUSH, a restart) answers NOSCRIPT, and the
// backend sends them again: lock cycles go on.
func TestScriptsRunAgainAfterTheServerForgotThem(t *testing.T) {
	b, plain := openLive(t), liveClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	table := "schedlock_flush_" + dialects.NewOwner()[len(dialects.NewOwner())-8:]
	l, err := b.Locker(dialects.StrategyTable, dialects.Table{Name: table})
	if err != nil {
		t.Fatal(err)
	}
	defer l.(dialects.TableDropper).DropTable(context.Background())
	for i := range 3 {
		for range 2 { // the first by EVAL, the second by EVALSHA
			lease, err := l.Acquire(ctx, "flushed", dialects.Options{Owner: "o"})
			if err != nil {
				t.Fatalf("round %d: acquire: %v", i, err)
			}
			if err := lease.Release(ctx); err != nil {
				t.Fatalf("round %d: release: %v", i, err)
			}
		}
		if err := plain.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// A listing loads the inspect script it runs by hash in a pipeline:
	// it works whatever the server forgot before.
	lease, err := l.Acquire(ctx, "listed", dialects.Options{Owner: "o"})
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(context.WithoutCancel(ctx))
	for range 2 {
		listing, err := b.ListLocks(ctx, dialects.ListOptions{Tables: []dialects.Table{{Name: table}}})
		if err != nil || len(listing.Locks) != 1 || listing.Locks[0].Name != "listed" {
			t.Fatalf("listing: %+v, %v; want the lock held", listing, err)
		}
		if err := plain.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
}
