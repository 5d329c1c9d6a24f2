package redis

import (
	"context"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/schedlock/schedlock/dialects"
	"github.com/schedlock/schedlock/dialects/benchops"
)

// The raw commands `schedlock bench` measures the engine against: the
// textbook single-node lock, SET key value NX PX to take and a Lua
// compare-and-delete to release, on a client of one connection.
var (
	_ benchops.StoreBaseline = (*Backend)(nil)
	_ benchops.RoundTripper  = (*Backend)(nil)
)

// RoundTripSQL names the round trip: PING.
func (*Backend) RoundTripSQL() string { return "PING" }

// rawRelease is the compare-and-delete of redis.io's lock pattern (the
// one bsm/redislock, redsync and ShedLock's safe update use).
var rawRelease = goredis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`)

// RawStoreOps implements benchops.StoreBaseline on a client of one
// connection of its own.
func (b *Backend) RawStoreOps(ctx context.Context) (benchops.StoreOps, error) {
	c := b.rawClient()
	if err := rawRelease.Load(ctx, c).Err(); err != nil {
		_ = c.Close()
		return benchops.StoreOps{}, explain(err)
	}
	const value = "schedlock-bench-raw"
	key := func(name string) string { return "schedlock-bench-raw:{" + escapeTag(name) + "}" }
	return benchops.StoreOps{
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
