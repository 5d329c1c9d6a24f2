package sqlkit_test

import (
	"errors"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// A slow but healthy server is not declared lost: with CheckEvery 1 s and
// every answer taking about 1.2 s (the proxy delays each chunk by 0.6 s),
// the lease stays held over several intervals and a Refresh succeeds. A
// server slower than a statement's patience (3×CheckEvery) is given up:
// with answers taking about 4 s the lease reports the loss.
func TestSlowServerIsNotLostLive(t *testing.T) {
	servers := liveServers(t)
	if len(servers) == 0 {
		t.Skip("needs a live server behind the proxy")
	}
	for _, s := range servers {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			ctx := testContext(t)
			db, proxy := proxied(t, s)
			l := sessionLocker(t, db)
			sl, ok := l.(*sqlkit.SessionLocker)
			if !ok {
				t.Fatalf("%T is not the session engine", l)
			}
			sl.CheckEvery = time.Second
			lease, err := l.Acquire(ctx, uniqueName("slow_"), dialects.Options{})
			if err != nil {
				t.Fatal(err)
			}

			proxy.Delay(600 * time.Millisecond)
			select {
			case <-lease.Done():
				t.Fatalf("a server answering in about 1.2 s was declared lost: %v", lease.Err())
			case <-time.After(6 * time.Second):
			}
			start := time.Now()
			if err := lease.Refresh(ctx); err != nil {
				t.Fatalf("Refresh through the slow server: %v", err)
			}
			t.Logf("%s: held through 6 s of 1.2 s answers; a Refresh took %s", s.name, time.Since(start).Round(time.Millisecond))

			proxy.Delay(2 * time.Second)
			slowed := time.Now()
			select {
			case <-lease.Done():
			case <-time.After(30 * time.Second):
				t.Fatal("a server answering in about 4 s, beyond the 3 s patience, was never given up")
			}
			if !errors.Is(lease.Err(), dialects.ErrLeaseLost) {
				t.Fatalf("lease error %v, want ErrLeaseLost", lease.Err())
			}
			t.Logf("%s: answers of about 4 s: lease lost after %s: %v", s.name, time.Since(slowed).Round(time.Millisecond), lease.Err())
			proxy.Delay(0)
		})
	}
}
