package sqlkit_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/sqlkit"
)

// otherNode returns a Locker that stands for another process on the same
// database as c: a second session locker (its own lock connections, so the
// server arbitrates) or the same table locker.
func otherNode(t *testing.T, c strategyCase) dialects.Locker {
	t.Helper()
	sl, ok := c.locker.(*sqlkit.SessionLocker)
	if !ok {
		return c.locker
	}
	other := &sqlkit.SessionLocker{Dialect: sl.Dialect, DB: sl.DB, Ops: sl.Ops}
	t.Cleanup(func() { _ = other.Close() })
	return other
}

// TestAtLeastKeptAfterReleaseLive: on every strategy, a Release before
// AtLeast returns at once with the lease ended cleanly, another node is
// refused the lock until AtLeast has passed since the acquire, and then
// takes it. On the session strategy the same process is refused too, a
// waiting Acquire of it gets the lock once the hold ends, and Freed closes
// then (at once for a table lease, which keeps at-least on the server).
func TestAtLeastKeptAfterReleaseLive(t *testing.T) {
	const atLeast = 1500 * time.Millisecond
	for _, c := range strategyCases(t) {
		t.Run(c.name, func(t *testing.T) {
			ctx := testContext(t)
			other := otherNode(t, c)
			name := uniqueName("atleast_")
			before := time.Now()
			lease, err := c.locker.Acquire(ctx, name, dialects.Options{AtMost: time.Minute, AtLeast: atLeast, Owner: "first"})
			if err != nil {
				t.Fatal(err)
			}
			if err := lease.Release(ctx); err != nil {
				t.Fatalf("Release within at-least: %v", err)
			}
			select {
			case <-lease.Done():
			default:
				t.Fatal("Done is open after Release")
			}
			if err := lease.Err(); err != nil {
				t.Fatalf("Err after a clean Release: %v", err)
			}
			if err := lease.Release(ctx); !errors.Is(err, dialects.ErrLeaseLost) {
				t.Errorf("second Release: %v, want ErrLeaseLost", err)
			}
			if _, err := other.Acquire(ctx, name, dialects.Options{Owner: "second"}); !errors.Is(err, dialects.ErrHeld) {
				t.Fatalf("another node right after the Release: %v, want ErrHeld", err)
			}
			_, session := c.locker.(*sqlkit.SessionLocker)
			freed := dialects.Freed(lease)
			if session {
				if _, err := c.locker.Acquire(ctx, name, dialects.Options{Owner: "again"}); !errors.Is(err, dialects.ErrHeld) {
					t.Fatalf("the same process right after the Release: %v, want ErrHeld", err)
				}
				select {
				case <-freed:
					t.Fatal("Freed is closed while the lock is kept for its at-least")
				default:
				}
				// A waiting Acquire in the process gets the lock when the
				// hold ends.
				next, err := c.locker.Acquire(ctx, name, dialects.Options{Owner: "waiter", Wait: 30 * time.Second})
				if err != nil {
					t.Fatalf("waiting Acquire in the process: %v", err)
				}
				if took := time.Since(before); took < atLeast {
					t.Errorf("the process took the lock again %s after the first acquire, before at-least %s", took, atLeast)
				}
				select {
				case <-freed:
				default:
					t.Error("Freed is open after the hold ended")
				}
				if err := next.Release(ctx); err != nil {
					t.Fatal(err)
				}
			} else {
				select {
				case <-freed:
				default:
					t.Error("Freed is open for a lease that keeps at-least on the server")
				}
			}
			deadline := time.Now().Add(20 * atLeast)
			for {
				l, err := other.Acquire(ctx, name, dialects.Options{Owner: "second"})
				if err == nil {
					// The table's times have millisecond precision.
					if took := time.Since(before); took < atLeast-10*time.Millisecond {
						t.Errorf("another node took the lock %s after the first acquire, before at-least %s", took, atLeast)
					}
					_ = l.Release(ctx)
					return
				}
				if !errors.Is(err, dialects.ErrHeld) || time.Now().After(deadline) {
					t.Fatalf("another node after at-least: %v", err)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// TestSessionHoldEndsWithCloseLive: a session lock kept for its at-least
// is freed at once by the locker's Close, like every lock of the locker,
// leaving no hold, goroutine or connection behind; another node then takes
// it without waiting for at-least.
func TestSessionHoldEndsWithCloseLive(t *testing.T) {
	for _, s := range liveServers(t) {
		t.Run(s.name, func(t *testing.T) {
			ctx := testContext(t)
			db := openDetected(t, s.driver, s.dsn, s.dialect)
			other, err := db.SessionLocker()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = other.(*sqlkit.SessionLocker).Close() })
			baseline := runtime.NumGoroutine()

			l, err := db.SessionLocker()
			if err != nil {
				t.Fatal(err)
			}
			sl := l.(*sqlkit.SessionLocker)
			names := []string{uniqueName("close_a_"), uniqueName("close_b_")}
			var freed []<-chan struct{}
			for _, name := range names {
				lease, err := sl.Acquire(ctx, name, dialects.Options{AtMost: time.Hour, AtLeast: time.Hour})
				if err != nil {
					t.Fatal(err)
				}
				if err := lease.Release(ctx); err != nil {
					t.Fatal(err)
				}
				freed = append(freed, dialects.Freed(lease))
			}
			if n := sl.Holding(); n != 2 {
				t.Fatalf("Holding = %d after two releases within at-least, want 2", n)
			}
			if _, err := other.Acquire(ctx, names[0], dialects.Options{}); !errors.Is(err, dialects.ErrHeld) {
				t.Fatalf("another node during the hold: %v, want ErrHeld", err)
			}
			if err := sl.Close(); err != nil {
				t.Fatal(err)
			}
			if n := sl.Holding(); n != 0 {
				t.Errorf("Holding = %d after Close, want 0", n)
			}
			if n := sl.Conns(); n != 0 {
				t.Errorf("%d lock connections open after Close", n)
			}
			for i, f := range freed {
				select {
				case <-f:
				default:
					t.Errorf("Freed of %s is open after Close", names[i])
				}
			}
			for _, name := range names {
				lease, err := other.Acquire(ctx, name, dialects.Options{Wait: 10 * time.Second})
				if err != nil {
					t.Fatalf("another node after Close: %v, want the lock Close freed", err)
				}
				_ = lease.Release(ctx)
			}
			if err := other.(*sqlkit.SessionLocker).Close(); err != nil {
				t.Fatal(err)
			}
			waitGoroutines(t, baseline)
		})
	}
}

// TestSessionHoldEndsWithConnectionLive: a lock kept for its at-least
// goes with its connection: cut, the lock is freed on the server, the
// hold is forgotten and Freed closes; the released lease stays released.
func TestSessionHoldEndsWithConnectionLive(t *testing.T) {
	for _, s := range liveServers(t) {
		t.Run(s.name, func(t *testing.T) {
			ctx := testContext(t)
			db, proxy := proxied(t, s)
			l, err := db.SessionLocker()
			if err != nil {
				t.Fatal(err)
			}
			sl := l.(*sqlkit.SessionLocker)
			t.Cleanup(func() { _ = sl.Close() })
			name := uniqueName("cut_")
			lease, err := sl.Acquire(ctx, name, dialects.Options{AtMost: time.Hour, AtLeast: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			if err := lease.Release(ctx); err != nil {
				t.Fatal(err)
			}
			proxy.Cut()
			select {
			case <-dialects.Freed(lease):
			case <-time.After(30 * time.Second):
				t.Fatal("Freed still open 30s after the connection was cut")
			}
			if n := sl.Holding(); n != 0 {
				t.Errorf("Holding = %d after the connection was lost, want 0", n)
			}
			if err := lease.Err(); err != nil {
				t.Errorf("Err of the released lease after the cut: %v, want nil", err)
			}
			proxy.Restore()
			direct := openDetected(t, s.driver, s.dsn, s.dialect)
			other, err := direct.SessionLocker()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = other.(*sqlkit.SessionLocker).Close() })
			next, err := other.Acquire(ctx, name, dialects.Options{Wait: 30 * time.Second})
			if err != nil {
				t.Fatalf("another node after the cut: %v, want the lock the server freed", err)
			}
			_ = next.Release(ctx)
		})
	}
}

// waitGoroutines waits until no more goroutines run than baseline, and
// fails after 10 seconds.
func waitGoroutines(t *testing.T, baseline int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > baseline {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines left, %d before:\n%s", runtime.NumGoroutine(), baseline, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestFreedSeesThroughWrappers: Freed finds a session lease under a
// namespace, and is closed for a lease without one.
func TestFreedSeesThroughWrappers(t *testing.T) {
	ctx := context.Background()
	sq := tableLocker(t, openSQLite(t))
	lease, err := dialects.WithNamespace(sq, "ns").Acquire(ctx, "job", dialects.Options{AtLeast: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-dialects.Freed(lease):
	default:
		t.Error("Freed of a table lease is open")
	}
	_ = lease.Release(ctx)
	for _, s := range liveServers(t) {
		db := openDetected(t, s.driver, s.dsn, s.dialect)
		l, err := db.SessionLocker()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = l.(*sqlkit.SessionLocker).Close() })
		lease, err := dialects.WithNamespace(l, "ns").Acquire(ctx, uniqueName("wrapped_"), dialects.Options{AtLeast: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if err := lease.Release(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case <-dialects.Freed(lease):
			t.Errorf("%s: Freed of a namespaced session lease kept for its at-least is closed", s.name)
		default:
		}
	}
}
