package redis

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bsm/redislock"
	goredis "github.com/redis/go-redis/v9"
)

// acquireVariant is acquireNativeLua with the part named by each
// replacement taken out; it fails the benchmark when a replacement no
// longer matches the script, so the variants cannot drift from it.
func acquireVariant(b *testing.B, replace ...string) *goredis.Script {
	src := acquireNativeLua
	for i := 0; i < len(replace); i += 2 {
		if !strings.Contains(src, replace[i]) {
			b.Fatalf("the acquire script no longer has %q", replace[i])
		}
		src = strings.Replace(src, replace[i], replace[i+1], 1)
	}
	return goredis.NewScript(src)
}

// BenchmarkAcquireParts is what each part of the acquire script costs the
// server: INFO commandstats' microseconds per successful acquire (the
// key deleted after each, a DEL not counted), for the engine's script,
// the script without the server's clock (locked-at written as 0),
// without the EXISTS (a SET NX instead, so a refused try would spend a
// token), with neither (the fencing token alone), bsm/redislock's
// obtain and a bare SET NX PX:
//
//	go test ./dialects/redis -run '^$' -bench AcquireParts -benchtime 20000x -count 3
//
// The variants are for measuring only; the engine runs acquireNative.
func BenchmarkAcquireParts(b *testing.B) {
	c, _ := liveCycles(b)
	ctx := context.Background()
	const noClock, noExists = "now_ms(), ARGV[1]", "if redis.call('EXISTS', KEYS[1]) == 1 then return {redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1])} end\n"
	const setPX, setNX = "redis.call('SET', KEYS[1], v, 'PX', ARGV[2])\nreturn v", "if redis.call('SET', KEYS[1], v, 'NX', 'PX', ARGV[2]) then return v end\nreturn {redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1])}"
	scripts := []struct {
		name   string
		script *goredis.Script
	}{
		{"engine", acquireNative},
		{"no-clock", acquireVariant(b, noClock, "0, ARGV[1]")},
		{"no-exists", acquireVariant(b, noExists, "", setPX, setNX)},
		{"token-only", acquireVariant(b, noClock, "0, ARGV[1]", noExists, "", setPX, setNX)},
	}
	keys := []string{"schedlock_bench_parts:{parts}", "schedlock_bench_parts:{parts}:token"}
	b.Cleanup(func() { c.Del(ctx, keys...) })
	measure := func(b *testing.B, command string, acquire func() error) {
		before := serverMicros(b, c, []string{command})
		for b.Loop() {
			if err := acquire(); err != nil {
				b.Fatal(err)
			}
			if err := c.Del(ctx, keys[0]).Err(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(serverMicros(b, c, []string{command})-before)/float64(b.N), "server-µs/acquire")
	}
	for _, s := range scripts {
		b.Run(s.name, func(b *testing.B) {
			measure(b, "evalsha", func() error {
				_, err := s.script.Run(ctx, c, keys, "bench", ms(time.Minute)).Text()
				return err
			})
		})
	}
	rl := redislock.New(c)
	b.Run("redislock", func(b *testing.B) {
		measure(b, "evalsha", func() error {
			_, err := rl.Obtain(ctx, keys[0], time.Minute, nil)
			return err
		})
	})
	b.Run("set-nx-px", func(b *testing.B) {
		measure(b, "set", func() error {
			return c.SetArgs(ctx, keys[0], "bench", goredis.SetArgs{Mode: "NX", TTL: time.Minute}).Err()
		})
	})
}
