package dynamodb_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/schedlock/schedlock/checks"
	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dynamodb"
	"github.com/schedlock/schedlock/dialects/dynamodb/shedlocksim"
	"github.com/schedlock/schedlock/lock"
)

// shedlockTable creates a ShedLock-layout table of the test's own,
// dropped when it ends, and returns its locker.
func shedlockTable(t *testing.T, b *dynamodb.Backend) (dialects.LeaseLocker, string) {
	t.Helper()
	name := checks.NewPrefix() + "_race"
	l, err := b.LeaseLocker(dialects.Table{Preset: dialects.PresetShedlock, Name: name})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.(dialects.TableCreator).CreateTable(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = l.(dialects.TableDropper).DropTable(ctx)
	})
	return l, name
}

// TestShedlockPresetExcludesShedLock races the shedlock preset against a
// ShedLock node on one table (shedlocksim: ShedLock's UpdateItem and its
// unguarded unlock).
func TestShedlockPresetExcludesShedLock(t *testing.T) {
	b := openLive(t)
	l, table := shedlockTable(t, b)
	raceShedLock(t, l, shedlocksim.Node{Client: b.Client(), Table: table, Host: "shedlock-node"})
}

// TestShedlockLibraryExcludesShedLock: the same race through lock.Open
// with x-preset=shedlock and x-table.
func TestShedlockLibraryExcludesShedLock(t *testing.T) {
	b := openLive(t)
	_, table := shedlockTable(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := lock.Open(ctx, withQuery(liveDSN(t), "x-preset=shedlock&x-table="+url.QueryEscape(table)))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	raceShedLock(t, libraryLocker{db}, shedlocksim.Node{Client: b.Client(), Table: table, Host: "shedlock-node"})
}

// libraryLocker is a *lock.DB as the engine's Locker.
type libraryLocker struct{ *lock.DB }

func (l libraryLocker) Acquire(ctx context.Context, name string, opts dialects.Options) (dialects.Lease, error) {
	return l.DB.Acquire(ctx, name, lock.Options(opts))
}

// withQuery adds query to the DSN raw.
func withQuery(raw, query string) string {
	if strings.Contains(raw, "?") {
		return raw + "&" + query
	}
	return raw + "?" + query
}

// raceShedLock races l against node on one name at a time: in every round
// both try at once, the winner holds a short critical section, and an
// overlap detector counts the holders inside it. Both must win rounds,
// and never two at a time.
func raceShedLock(t *testing.T, l dialects.Locker, node shedlocksim.Node) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const rounds = 300
	var inside, doubles, schedlockWins, shedlockWins atomic.Int64
	critical := func(wins *atomic.Int64) {
		if inside.Add(1) > 1 {
			doubles.Add(1)
		}
		wins.Add(1)
		time.Sleep(200 * time.Microsecond)
		inside.Add(-1)
	}
	for round := range rounds {
		name := fmt.Sprintf("job-%d", round%7)
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make(chan error, 2)
		wg.Go(func() {
			<-start
			lease, err := l.Acquire(ctx, name, dialects.Options{AtMost: 10 * time.Second, Owner: "schedlock-node"})
			if errors.Is(err, dialects.ErrHeld) {
				return
			}
			if err != nil {
				errs <- err
				return
			}
			critical(&schedlockWins)
			if err := lease.Release(ctx); err != nil {
				errs <- err
			}
		})
		wg.Go(func() {
			<-start
			held, ok, err := node.Lock(ctx, name, 10*time.Second)
			if err != nil || !ok {
				if err != nil {
					errs <- err
				}
				return
			}
			critical(&shedlockWins)
			if err := node.Unlock(ctx, held, 0); err != nil {
				errs <- err
			}
		})
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	if d := doubles.Load(); d != 0 {
		t.Fatalf("%d double holds in %d rounds", d, rounds)
	}
	if schedlockWins.Load() == 0 || shedlockWins.Load() == 0 {
		t.Fatalf("schedlock won %d rounds, ShedLock %d: want both to win some", schedlockWins.Load(), shedlockWins.Load())
	}
	t.Logf("%d rounds: schedlock held %d times, ShedLock %d times, 0 double holds", rounds, schedlockWins.Load(), shedlockWins.Load())
}
