package redis

import (
	"context"
	"testing"
	"time"

	"github.com/bsm/redislock"
	goredis "github.com/redis/go-redis/v9"

	"github.com/schedlock/schedlock/dialects"
)

// cannedReplies is a go-redis hook that answers every EVALSHA at once,
// without a server: the acquire script with a token, everything else
// with what a successful obtain or release answers.
type cannedReplies struct{}

func (cannedReplies) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (cannedReplies) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}
func (cannedReplies) ProcessHook(goredis.ProcessHook) goredis.ProcessHook {
	return func(_ context.Context, cmd goredis.Cmder) error {
		c, ok := cmd.(*goredis.Cmd)
		if !ok {
			return nil
		}
		switch args := cmd.Args(); {
		case len(args) > 1 && args[1] == acquireNative.Hash():
			c.SetVal(int64(7)) // the token
		case len(args) > 1 && args[1] == releaseValue.Hash():
			c.SetVal(int64(1))
		case len(args) == 7: // bsm/redislock's obtain: sha, 1 key, value, token length, ttl
			c.SetVal("OK")
		default:
			c.SetVal(int64(1))
		}
		return nil
	}
}

// BenchmarkClientWork measures what a lock cycle costs the client alone —
// the engine's Acquire and Release against bsm/redislock's Obtain and
// Release — with every command answered by a hook instead of a server:
//
//	go test ./dialects/redis -run '^$' -bench ClientWork -benchmem
func BenchmarkClientWork(b *testing.B) {
	ctx := context.Background()
	c := goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"}) // never dialled
	defer c.Close()
	c.AddHook(cannedReplies{})
	bk := &Backend{client: c, cfg: &config{single: &goredis.Options{}}, facts: &Facts{}}
	l, err := bk.Locker(dialects.StrategyTable, dialects.Table{})
	if err != nil {
		b.Fatal(err)
	}
	opts := dialects.Options{Owner: "bench", AtMost: time.Minute}
	b.Run("engine", func(b *testing.B) {
		for b.Loop() {
			lease, err := l.Acquire(ctx, "nightly", opts)
			if err != nil {
				b.Fatal(err)
			}
			if err := lease.Release(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	rl := redislock.New(c)
	b.Run("redislock", func(b *testing.B) {
		for b.Loop() {
			lock, err := rl.Obtain(ctx, "nightly", time.Minute, nil)
			if err != nil {
				b.Fatal(err)
			}
			if err := lock.Release(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
