package redis

import (
	"context"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/internal/benchkit"
)

func init() { benchkit.Register(Name, benchSupport{}) }

// benchSupport gives `schedlock bench` the raw commands the engine
// competes with: the textbook single-node lock, SET key value NX PX to
// take and a Lua compare-and-delete to release, on a client of one
// connection.
type benchSupport struct{}

var (
	_ benchkit.RawStore     = benchSupport{}
	_ benchkit.RoundTripper = benchSupport{}
)

// RoundTripSQL names the round trip: PING.
func (benchSupport) RoundTripSQL() string { return "PING" }

// rawRelease is the compare-and-delete of redis.io's lock pattern (the
// one bsm/redislock, redsync and ShedLock's safe update use).
var rawRelease = goredis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`)

// RawStoreOps implements benchkit.RawStore.
func (benchSupport) RawStoreOps(ctx context.Context, b dialects.Backend) (benchkit.StoreOps, error) {
	rb, ok := b.(*Backend)
	if !ok {
		return benchkit.StoreOps{}, fmt.Errorf("%w: not a Redis backend", dialects.ErrInvalid)
	}
	c := rb.rawClient()
	if err := rawRelease.Load(ctx, c).Err(); err != nil {
		_ = c.Close()
		return benchkit.StoreOps{}, explain(err)
	}
	const value = "schedlock-bench-raw"
	key := func(name string) string { return "schedlock-bench-raw:{" + escapeTag(name) + "}" }
	return benchkit.StoreOps{
		RoundTrip: func(ctx context.Context) error { return c.Ping(ctx).Err() },
		TryLock: func(ctx context.Context, name string) (bool, error) {
			err := c.Do(ctx, "SET", key(name), value, "NX", "PX", dialects.DefaultAtMost.Milliseconds()).Err()
			if isNil(err) {
				return false, nil
			}
			return err == nil, err
		},
		Unlock: func(ctx context.Context, name string) error {
			n, err := rawRelease.Run(ctx, c, []string{key(name)}, value).Int64()
			if err == nil && n != 1 {
				err = fmt.Errorf("raw release of %q found it not held", name)
			}
			return err
		},
		Close: c.Close,
	}, nil
}
