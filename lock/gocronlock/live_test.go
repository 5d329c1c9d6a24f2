package gocronlock_test

import (
	"context"
	"errors"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/jonboulle/clockwork"

	"github.com/schedlock/schedlock/lock"
	"github.com/schedlock/schedlock/lock/gocronlock"
	"github.com/schedlock/schedlock/lock/internal/locktest"
)

// Three nodes whose clocks differ: node 0 is right, node 1 runs ahead and
// node 2 behind, so each fires a tick at its own moment.
var nodeSkews = []time.Duration{0, 60 * time.Millisecond, -60 * time.Millisecond}

const (
	// tickInterval is long enough that a node whose lock attempt is late by
	// most of half of it (a stalled process on a busy machine) still finds
	// the tick's lock held.
	tickInterval = 2 * time.Second
	ticksToWatch = 2
	jobWork      = 20 * time.Millisecond
	// tickEarly is how far before its tick a run may start and still count
	// for it: a timer's slack.
	tickEarly = 100 * time.Millisecond
)

// TestEachTickRunsOnce runs one job every 2 seconds on three gocron
// schedulers sharing one database (SQLite, and PostgreSQL and MariaDB with
// both strategies), the clocks of two of them off by ±60ms, and counts the
// runs of each tick: every tick runs exactly once, with the Locker
// (at-least half the interval keeps the nodes that fire late from running
// the tick again, gocron #841) and with the Elector (only the leader runs;
// on the table strategy only: an elector is one lease like any other).
func TestEachTickRunsOnce(t *testing.T) {
	t.Parallel()
	cases := map[string]string{}
	for backend, dsn := range liveDSNs(t) {
		openT(t, dsn) // the table, before the subtests
		cases[backend+"/locker"] = dsn
		if !strings.HasSuffix(backend, "/session") {
			cases[backend+"/elector"] = dsn
		}
	}
	runAll(t, cases, func(t *testing.T, dsn string) {
		mode := path.Base(t.Name())
		name := "tick-" + mode + "-" + lock.NewOwner()
		counter := newTickCounter()
		origin := time.Now().Truncate(time.Second).Add(-10 * tickInterval)
		var schedulers []gocron.Scheduler
		for node, skew := range nodeSkews {
			clock := skewedClock{Clock: clockwork.NewRealClock(), skew: skew}
			db := openT(t, dsn)
			warmUp(t, db) // the first run of a node is not late by its connection's setup
			opts := []gocron.SchedulerOption{gocron.WithClock(clock), gocron.WithStopTimeout(10 * time.Second)}
			if mode == "locker" {
				opts = append(opts, gocron.WithDistributedLocker(gocronlock.NewLocker(db, gocronlock.Options{AtMost: time.Minute, AtLeast: tickInterval / 2})))
			} else {
				e, err := gocronlock.NewElector(t.Context(), db, name, gocronlock.ElectorOptions{Lease: 5 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = e.Close() })
				opts = append(opts, gocron.WithDistributedElector(e))
			}
			s, err := gocron.NewScheduler(opts...)
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.NewJob(gocron.DurationJob(tickInterval), gocron.NewTask(func() {
				// A node fires at its own clock's round times, never before:
				// a run belongs to the last tick its clock has passed, even
				// when it starts late on a busy machine.
				counter.add(int((clock.Now().Sub(origin)+tickEarly)/tickInterval), node)
				time.Sleep(jobWork) // the job's work
			}), gocron.WithName(name), gocron.WithStartAt(gocron.WithStartDateTimePast(origin)))
			if err != nil {
				t.Fatal(err)
			}
			schedulers = append(schedulers, s)
		}
		for _, s := range schedulers {
			s.Start()
		}
		counter.waitSpan(t, ticksToWatch, 20*ticksToWatch*tickInterval)
		for _, s := range schedulers {
			if err := s.Shutdown(); err != nil {
				t.Error(err)
			}
		}
		counter.checkOncePerTick(t)
		t.Logf("runs per tick (nodes): %v", counter.snapshot())
	})
}

// warmUp takes and releases a lock on db once, so that the connection and
// statements a lock needs are ready before the schedulers start.
func warmUp(t *testing.T, db *lock.DB) {
	t.Helper()
	l, err := gocronlock.NewLocker(db, gocronlock.Options{}).Lock(t.Context(), "warm-up-"+lock.NewOwner())
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Unlock(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// TestLeaseOutlivesAtMostWhileTheJobRuns: a run that takes longer than
// AtMost keeps its lock, refreshed meanwhile, and its Unlock succeeds; a
// lock still held refuses another node with ErrHeld.
func TestLeaseOutlivesAtMostWhileTheJobRuns(t *testing.T) {
	t.Parallel()
	runAll(t, liveDSNs(t), func(t *testing.T, dsn string) {
		a, b := openT(t, dsn), openT(t, dsn)
		const atMost = 1500 * time.Millisecond // refreshed every 500ms
		name := "long-run-" + lock.NewOwner()
		l, err := gocronlock.NewLocker(a, gocronlock.Options{AtMost: atMost}).Lock(t.Context(), name)
		if err != nil {
			t.Fatal(err)
		}
		<-time.After(3 * atMost) // the job runs three leases long
		if _, err := gocronlock.NewLocker(b, gocronlock.Options{}).Lock(t.Context(), name); !errors.Is(err, lock.ErrHeld) {
			t.Fatalf("second node after 3×AtMost: %v, want ErrHeld", err)
		}
		if err := l.Unlock(t.Context()); err != nil {
			t.Fatalf("Unlock after a refreshed run: %v", err)
		}
		if err := l.Unlock(t.Context()); !errors.Is(err, lock.ErrLeaseLost) {
			t.Errorf("second Unlock: %v, want ErrLeaseLost", err)
		}
		next, err := gocronlock.NewLocker(b, gocronlock.Options{}).Lock(t.Context(), name)
		if err != nil {
			t.Fatalf("after Unlock: %v", err)
		}
		_ = next.Unlock(t.Context())
	})
}

// TestAtLeastHoldsAfterUnlock: without AtLeast the lock is free as soon as
// a quick run ends, so a node whose clock is behind runs the tick again
// (gocron #841); with it, Unlock keeps the lock until AtLeast, judged by
// the database (table) or held by the process (session), then frees it.
func TestAtLeastHoldsAfterUnlock(t *testing.T) {
	t.Parallel()
	runAll(t, liveDSNs(t), func(t *testing.T, dsn string) {
		a, b := openT(t, dsn), openT(t, dsn)
		name := "at-least-" + lock.NewOwner()
		other := gocronlock.NewLocker(b, gocronlock.Options{})

		quick, err := gocronlock.NewLocker(a, gocronlock.Options{}).Lock(t.Context(), name)
		if err != nil {
			t.Fatal(err)
		}
		if err := quick.Unlock(t.Context()); err != nil {
			t.Fatal(err)
		}
		again, err := other.Lock(t.Context(), name)
		if err != nil {
			t.Fatalf("without AtLeast, right after Unlock: %v, want the lock free", err)
		}
		if err := again.Unlock(t.Context()); err != nil {
			t.Fatal(err)
		}

		const atLeast = time.Second
		l, err := gocronlock.NewLocker(a, gocronlock.Options{AtLeast: atLeast}).Lock(t.Context(), name)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Unlock(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, err := other.Lock(t.Context(), name); !errors.Is(err, lock.ErrHeld) {
			t.Fatalf("right after Unlock: %v, want ErrHeld (AtLeast %s)", err, atLeast)
		}
		deadline := time.Now().Add(10 * atLeast)
		for {
			next, err := other.Lock(t.Context(), name)
			if err == nil {
				_ = next.Unlock(t.Context())
				return
			}
			if !errors.Is(err, lock.ErrHeld) || time.Now().After(deadline) {
				t.Fatalf("after AtLeast: %v", err)
			}
			<-time.After(100 * time.Millisecond)
		}
	})
}

// TestLockHonoursContext: a Lock whose context has ended takes nothing.
func TestLockHonoursContext(t *testing.T) {
	t.Parallel()
	dsn := locktest.SQLite(liveDSNs(t))
	db := openT(t, dsn)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	name := "cancelled-" + lock.NewOwner()
	if _, err := gocronlock.NewLocker(db, gocronlock.Options{}).Lock(ctx, name); err == nil {
		t.Fatal("Lock with a cancelled context succeeded")
	}
	l, err := gocronlock.NewLocker(db, gocronlock.Options{}).Lock(t.Context(), name)
	if err != nil {
		t.Fatalf("the lock was left taken: %v", err)
	}
	_ = l.Unlock(t.Context())
}

// TestInvalidOptions fail every Lock with ErrInvalid.
func TestInvalidOptions(t *testing.T) {
	t.Parallel()
	db := openT(t, locktest.SQLite(liveDSNs(t)))
	_, err := gocronlock.NewLocker(db, gocronlock.Options{AtMost: time.Second, AtLeast: time.Minute}).Lock(t.Context(), "x")
	if !errors.Is(err, lock.ErrInvalid) {
		t.Errorf("AtLeast over AtMost: %v, want ErrInvalid", err)
	}
	if _, err := gocronlock.NewElector(t.Context(), db, "x", gocronlock.ElectorOptions{Lease: -time.Second}); !errors.Is(err, lock.ErrInvalid) {
		t.Errorf("negative lease: %v, want ErrInvalid", err)
	}
}

// TestElectorHandsOver: of two electors one leads; when it resigns the
// other takes over at its next try.
func TestElectorHandsOver(t *testing.T) {
	t.Parallel()
	runAll(t, liveDSNs(t), func(t *testing.T, dsn string) {
		name := "leader-" + lock.NewOwner()
		opts := gocronlock.ElectorOptions{Lease: 3 * time.Second, RetryEvery: 200 * time.Millisecond}
		first, err := gocronlock.NewElector(t.Context(), openT(t, dsn), name, opts)
		if err != nil {
			t.Fatal(err)
		}
		second, err := gocronlock.NewElector(t.Context(), openT(t, dsn), name, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer second.Close()
		if err := first.IsLeader(t.Context()); err != nil {
			t.Fatalf("first elector: %v, want leader", err)
		}
		if err := second.IsLeader(t.Context()); !errors.Is(err, gocronlock.ErrNotLeader) {
			t.Fatalf("second elector: %v, want ErrNotLeader", err)
		}
		if err := first.Close(); err != nil {
			t.Fatalf("resign: %v", err)
		}
		if err := first.IsLeader(t.Context()); !errors.Is(err, gocronlock.ErrNotLeader) {
			t.Errorf("after Close: %v, want ErrNotLeader", err)
		}
		deadline := time.Now().Add(50 * opts.RetryEvery)
		for second.IsLeader(t.Context()) != nil {
			if time.Now().After(deadline) {
				t.Fatalf("second elector not leader %s after the first resigned: %v", 50*opts.RetryEvery, second.IsLeader(t.Context()))
			}
			<-time.After(opts.RetryEvery / 4)
		}
	})
}
