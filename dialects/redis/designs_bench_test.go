package redis

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// Two acquire designs the engine does not run, measured beside its own
// scripts so that a change of the native layout can be weighed on
// figures: both drop the server's clock from the acquire (at-least kept
// by PTTL arithmetic on a span the value carries, see designRelease) and
// answer with the token alone.
//
// designTokenInValue takes the token first and writes it into the value,
// giving it back when the SET NX is refused (a refused try then writes
// twice, net nothing). KEYS lock, counter; ARGV value tail, at-most ms.
var designTokenInValue = goredis.NewScript(`
local n = redis.call('INCR', KEYS[2])
if redis.call('SET', KEYS[1], n .. ' ' .. ARGV[1], 'NX', 'PX', ARGV[2]) then return n end
redis.call('DECR', KEYS[2])
return {redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1])}
`)

// designTokenInCounter takes the lock with the client's value and then
// the token, which only the counter keeps (a refused try writes nothing).
// KEYS lock, counter; ARGV value, at-most ms.
var designTokenInCounter = goredis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return redis.call('INCR', KEYS[2]) end
return {redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1])}
`)

// designRelease is the release both designs need: KEYS lock; ARGV the
// exact value, at-least ms. The value starts with its span (the lock's
// expiry minus its locked-at, at-most when taken), so at-least keeps the
// lock until now + at-least - (span - PTTL), on the server's clock alone;
// luaRelease does the rest (without at-least no clock is read).
var designRelease = goredis.NewScript(luaNow + `
local v = redis.call('GET', KEYS[1])
if v ~= ARGV[1] then return {0, v} end
local keep_until = 0
if ARGV[2] ~= '0' then
  keep_until = now_ms() + tonumber(ARGV[2]) - (tonumber(string.match(v, '(%d+) ')) - redis.call('PTTL', KEYS[1]))
end
` + luaRelease)

// BenchmarkAcquireDesigns interleaves, as BenchmarkCycleRatio does, the
// raw loop, the engine's scripts called bare, and a cycle of each design
// above with designRelease, and reports each one's cycles per second
// against raw's:
//
//	go test ./dialects/redis -run '^$' -bench AcquireDesigns -benchtime 8s -count 3
//
// For measuring only; the engine runs acquireNative.
func BenchmarkAcquireDesigns(b *testing.B) {
	c, cycles := liveCycles(b)
	ctx := b.Context()
	const tail = "60000 AbCdEfGhIjKlMnOpQrStUv bench" // span, a per-acquire nonce, owner
	design := func(name string, acquire *goredis.Script, tokenFirst bool) benchCycle {
		keys := []string{"schedlock_bench_design:{" + name + "}", "schedlock_bench_design:{" + name + "}:token"}
		b.Cleanup(func() { c.Del(context.Background(), keys...) })
		return benchCycle{name: name, cycle: func() error {
			token, err := acquire.Run(ctx, c, keys, tail, ms(time.Minute)).Int64()
			if err != nil {
				return err
			}
			value := tail
			if tokenFirst {
				value = asString(token) + " " + tail
			}
			return designRelease.Run(ctx, c, keys[:1], value, 0).Err()
		}}
	}
	var run []benchCycle
	for _, cy := range cycles {
		if cy.name == "raw" || cy.name == "scripts" {
			run = append(run, cy)
		}
	}
	run = append(run, design("token-in-value", designTokenInValue, true), design("token-in-counter", designTokenInCounter, false))
	for b.Loop() {
		for _, i := range rand.Perm(len(run)) {
			start := time.Now()
			if err := run[i].cycle(); err != nil {
				b.Fatalf("%s: %v", run[i].name, err)
			}
			run[i].took += time.Since(start)
		}
	}
	var raw time.Duration
	for _, cy := range run {
		if cy.name == "raw" {
			raw = cy.took
		}
	}
	for _, cy := range run {
		if cy.name != "raw" {
			b.ReportMetric(raw.Seconds()/cy.took.Seconds(), cy.name+"/raw")
		}
	}
}
