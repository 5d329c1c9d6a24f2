package redis_test

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/redis/shedlocksim"
	"github.com/schedlock/schedlock/lock"
)

// liveClient is a plain go-redis client of the live Redis, closed when
// the test ends: the connection a ShedLock node would have.
func liveClient(t *testing.T) *goredis.Client {
	t.Helper()
	opts, err := goredis.ParseURL(liveDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	c := goredis.NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// raceEnv is an environment of the test's own.
func raceEnv(prefix string) string {
	return prefix + hex.EncodeToString([]byte(dialects.NewOwner()))[:12]
}

// TestShedlockPresetExcludesShedLock races the shedlock preset, its
// environment given as the table, against a ShedLock node of that
// environment (shedlocksim: SET … NX PX, delLuaScript to release).
func TestShedlockPresetExcludesShedLock(t *testing.T) {
	b := openLive(t)
	env := raceEnv("race_")
	l, err := b.Locker(dialects.StrategyTable, dialects.Table{Preset: dialects.PresetShedlock, Name: env})
	if err != nil {
		t.Fatal(err)
	}
	raceShedLock(t, l, shedlocksim.Node{Client: liveClient(t), Environment: env, SafeUpdate: true})
}

// TestShedlockNamespaceExcludesShedLock: the same race with the
// environment given as the namespace (x-namespace, through lock.Open),
// against a node built with .environment(env) and ShedLock's default
// unlock (DEL). The environment holds a '-', which no table name may.
func TestShedlockNamespaceExcludesShedLock(t *testing.T) {
	env := raceEnv("race-ns-")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := lock.Open(ctx, withQuery(liveDSN(t), "x-preset=shedlock&x-namespace="+url.QueryEscape(env)))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	raceShedLock(t, libraryLocker{db}, shedlocksim.Node{Client: liveClient(t), Environment: env})
}

// libraryLocker is a *lock.DB as the engine's Locker: the library's
// Options are the engine's fields under a type of its own.
type libraryLocker struct{ *lock.DB }

func (l libraryLocker) Acquire(ctx context.Context, name string, opts dialects.Options) (dialects.Lease, error) {
	return l.DB.Acquire(ctx, name, lock.Options(opts))
}

// withQuery adds query to the DSN raw.
func withQuery(raw, query string) string {
	u, _ := url.Parse(raw)
	if u.RawQuery != "" {
		query = u.RawQuery + "&" + query
	}
	u.RawQuery = query
	return u.String()
}

// raceShedLock races l against node on one name at a time: in every round
// both try at once, the winner holds a short critical section, and an
// overlap detector counts the holders inside it. Both must win rounds,
// and never two at a time; no key of node's environment is left.
func raceShedLock(t *testing.T, l dialects.Locker, node shedlocksim.Node) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
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
	if left := scanAll(t, node.Client, node.Key("*")); len(left) != 0 {
		t.Errorf("keys left behind: %q", left)
	}
}

// scanAll is every key matching pattern.
func scanAll(t *testing.T, c goredis.UniversalClient, pattern string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []string
	iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
	for iter.Next(ctx) {
		out = append(out, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
