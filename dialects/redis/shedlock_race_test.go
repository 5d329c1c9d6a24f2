package redis_test

import (
	"context"
	"encoding/hex"
	"net/url"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/dialecttest"
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

// raceShedLock races l against node (dialecttest.RaceShedLock); no key
// of node's environment is left.
func raceShedLock(t *testing.T, l dialects.Locker, node shedlocksim.Node) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dialecttest.RaceShedLock(ctx, t, l, "job-%d", func(ctx context.Context, name string, atMost time.Duration) (func(context.Context) error, bool, error) {
		held, ok, err := node.Lock(ctx, name, atMost)
		return func(ctx context.Context) error { return node.Unlock(ctx, held, 0) }, ok, err
	})
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
