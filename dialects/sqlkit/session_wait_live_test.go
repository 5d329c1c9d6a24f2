package sqlkit_test

import (
	"errors"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// A wait on the server does not keep its connection's watcher busy: while
// the statement runs, the watcher looks again after the quiet delay
// (20 ms), not every millisecond. Over about 1.5 s of a waiting acquire
// the waiter's watcher turns about 75 times; a spin turned about 1,500.
func TestServerWaitDoesNotSpinTheWatcherLive(t *testing.T) {
	servers := liveServers(t)
	if len(servers) == 0 {
		t.Skip("needs a live server")
	}
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			ctx := testContext(t)
			db := openDetected(t, s.driver, s.dsn, s.dialect)
			holder := sessionLocker(t, db)
			waiter, ok := sessionLocker(t, db).(*sqlkit.SessionLocker)
			if !ok {
				t.Fatal("not the session engine")
			}
			name := uniqueName("wait_spin_")
			lease, err := holder.Acquire(ctx, name, dialects.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer lease.Release(ctx)
			// Open the waiter's connection first, so that its watcher
			// exists when the wait starts.
			other, err := waiter.Acquire(ctx, uniqueName("wait_spin_other_"), dialects.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := other.Release(ctx); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := waiter.Acquire(ctx, name, dialects.Options{Wait: 4 * time.Second})
				done <- err
			}()
			time.Sleep(500 * time.Millisecond)
			before := waiter.WatcherRounds()
			time.Sleep(1500 * time.Millisecond)
			rounds := waiter.WatcherRounds() - before
			if err := <-done; !errors.Is(err, dialects.ErrHeld) {
				t.Fatalf("the wait ended with %v, want ErrHeld", err)
			}
			t.Logf("%s: the watcher turned %d times in 1.5 s of a server-side wait", s.name, rounds)
			if rounds > 400 {
				t.Fatalf("the watcher turned %d times in 1.5 s of a server-side wait: it spins", rounds)
			}
		})
	}
}
