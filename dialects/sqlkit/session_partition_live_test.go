package sqlkit_test

import (
	"errors"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// A holder cut off by a silent partition (the proxy stalls: nothing is
// forwarded, nothing answered, and no connection closes) learns of the
// loss before PartitionBound, and the server itself frees the lock within
// the bound (plus a margin for a busy machine): another locker, on a
// connection of its own, takes it while the proxy is still stalled.
// PostgreSQL ends the idle session by idle_session_timeout, MySQL/MariaDB
// by wait_timeout; keepalives and tcp_user_timeout cannot act here, the
// proxy's kernel answering for the vanished client.
func TestSessionPartitionBoundLive(t *testing.T) {
	servers := liveServers(t)
	if len(servers) == 0 {
		t.Skip("needs a live server behind the proxy")
	}
	const bound = 5 * time.Second
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			ctx := testContext(t)
			db, proxy := proxied(t, s)
			holderLocker := sessionLocker(t, db)
			if !sqlkit.ApplyPartitionBound(holderLocker, bound) {
				t.Fatal("the session locker takes no partition bound")
			}
			direct := openDetected(t, s.driver, s.dsn, s.dialect)
			other := sessionLocker(t, direct)

			name := uniqueName("partition_")
			lease, err := holderLocker.Acquire(ctx, name, dialects.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := other.Acquire(ctx, name, dialects.Options{}); !errors.Is(err, dialects.ErrHeld) {
				t.Fatalf("second locker before the stall: %v, want ErrHeld", err)
			}
			stalled := time.Now()
			proxy.Stall()

			select {
			case <-lease.Done():
			case <-time.After(bound):
				t.Fatalf("the lease did not report the loss within the partition bound %s", bound)
			}
			lostAfter := time.Since(stalled)
			if !errors.Is(lease.Err(), dialects.ErrLeaseLost) {
				t.Fatalf("lease error %v, want ErrLeaseLost", lease.Err())
			}

			margin := 30 * time.Second
			for {
				l, err := other.Acquire(ctx, name, dialects.Options{})
				if err == nil {
					freedAfter := time.Since(stalled)
					t.Logf("%s: stalled; lease lost after %s; the server freed the lock after %s (bound %s)", s.name, lostAfter.Round(time.Millisecond), freedAfter.Round(time.Millisecond), bound)
					if proxy.Conns() == 0 {
						t.Fatal("the proxy's connection closed: the test no longer models a silent partition")
					}
					if freedAfter < lostAfter {
						t.Fatalf("the server freed the lock (%s) before the lease reported the loss (%s)", freedAfter, lostAfter)
					}
					_ = l.Release(ctx)
					return
				}
				if !errors.Is(err, dialects.ErrHeld) {
					t.Fatal(err)
				}
				if time.Since(stalled) > bound+margin {
					t.Fatalf("the server still holds the lock %s after the stall (bound %s)", time.Since(stalled).Round(time.Second), bound)
				}
				time.Sleep(200 * time.Millisecond)
			}
		})
	}
}

// sessionLocker is db's session locker, closed at the end of the test.
func sessionLocker(t *testing.T, db *sqlkit.DB) dialects.Locker {
	t.Helper()
	l, err := db.SessionLocker()
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := l.(interface{ Close() error }); ok {
		t.Cleanup(func() { _ = c.Close() })
	}
	return l
}
