package redis

import goredis "github.com/redis/go-redis/v9"

// The scripts run atomically on the server, one round trip each (EVAL
// the first time a backend runs one, EVALSHA after, EVAL again when a
// server answers NOSCRIPT: runscript.go). Every time they use is the server's:
// TIME, and PEXPIRE/PX relative to its now. Replies: see each script.

// luaNow is the server's now in milliseconds. Writes after TIME are
// allowed since Redis 5, which replicates a script's effects, not the
// script.
const luaNow = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`

// acquireNative: KEYS lock, counter; ARGV the value, at-most ms. The
// lock is the client's value "<at-most ms> <nonce> <owner>" (see
// nativeValue), set with PX only when the key is absent; then the
// fencing token is taken: the server's TIME in microseconds, or the
// counter + 1 when the counter is already there or beyond (a token of
// the earlier INCR counter, a clock that went back, two acquires in one
// microsecond), written to the counter by GETSET. So tokens grow on
// every acquire, and still grow when the counter key was lost with the
// server's data (a restart without persistence, a failover to a replica
// that never saw it): the clock is their floor. Reply: the token, when
// taken; {value, pttl ms} when held (nothing written then, no clock
// read). The value's span (at-most, the key's expiry less its locked-at)
// and the key's expiry give locked-at on the server's clock.
var acquireNative = goredis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  local t = redis.call('TIME')
  local token = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local last = tonumber(redis.call('GETSET', KEYS[2], string.format('%d', token)))
  if last and last >= token then
    token = last + 1
    redis.call('SET', KEYS[2], string.format('%d', token))
  end
  return token
end
return {redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1])}
`)

// luaSpan works on a native value of the span form (nativeValue), v
// with span its first field:
//
//   - elapsed(span): the time since the lock's locked-at, its span less
//     its PTTL (0 when the key has no expiry: then at-least counts from
//     now);
//   - respan(v, span, px): the expiry set to px ms from the server's now
//     and the span to elapsed + px, so locked-at stays where it was;
//   - release_span(v, span, at_least): the key deleted, or kept until
//     locked-at + at-least (ms) when that is still ahead — its expiry
//     shortened, never lengthened. Reply 1.
const luaSpan = luaDelete + `
local function elapsed(span)
  local pttl = redis.call('PTTL', KEYS[1])
  if pttl < 0 then return 0 end
  return math.max(tonumber(span) - pttl, 0)
end
local function respan(v, span, px)
  redis.call('SET', KEYS[1], string.format('%d', elapsed(span) + px) .. string.sub(v, #span + 1), 'PX', string.format('%d', px))
end
local function release_span(v, span, at_least)
  local keep = 0
  if at_least > 0 then keep = at_least - elapsed(span) end
  if keep > 0 then
    local pttl = redis.call('PTTL', KEYS[1])
    if pttl < 0 or keep < pttl then respan(v, span, keep) end
    return 1
  end
  return delete_lock()
end
`

// checkIdent is the check of a native lease this process acquired:
// KEYS[1] the lock; ARGV[1] the value's identity (everything after its
// span: " <nonce> <owner>", which a refresh leaves as it is). It returns
// from the script with {0, the value found or nil} when the key holds
// another; else it leaves the value in v and its span in span.
const checkIdent = `
local v = redis.call('GET', KEYS[1])
local span, ident
if v then span, ident = string.match(v, '^(%d+)( .*)$') end
if ident ~= ARGV[1] then return {0, v} end
`

// refreshValue is the refresh of a native lease this process acquired:
// KEYS lock; ARGV its identity (checkIdent), at-most ms. Reply 1 (the
// expiry and span reset by respan), or {0, the value found or nil}.
var refreshValue = goredis.NewScript(luaSpan + checkIdent + `
respan(v, span, tonumber(ARGV[2]))
return 1
`)

// releaseValue is the release of a native lease this process acquired:
// KEYS lock; ARGV its identity (checkIdent), at-least ms ("0": none).
// Reply 1 (release_span), or {0, the value found or nil}. No clock is
// read.
var releaseValue = goredis.NewScript(luaSpan + checkIdent + `
return release_span(v, span, tonumber(ARGV[2]))
`)

// refreshExact is the refresh of a ShedLock-layout lease this process
// acquired: KEYS lock; ARGV the exact value the acquire wrote, at-most
// ms. Reply 1 when the value is still there (its expiry reset to at-most
// from the server's now); else {0, the value found or nil}.
var refreshExact = goredis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v ~= ARGV[1] then return {0, v} end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`)

// releaseExact is the release of a ShedLock-layout lease this process
// acquired: KEYS lock; ARGV the exact value the acquire wrote, the
// server time (ms) at-least keeps the lock until ("0": none). Reply as
// luaRelease, or {0, the value found or nil}.
var releaseExact = goredis.NewScript(luaNow + luaDelete + `
local v = redis.call('GET', KEYS[1])
if v ~= ARGV[1] then return {0, v} end
` + luaKeepUntil + luaRelease)

// luaKeepUntil turns ARGV[2], the server time (ms) at-least keeps the
// lock until ("0": none, and then no clock is read), into keep, the time
// still to keep it.
const luaKeepUntil = `
local keep = 0
if ARGV[2] ~= '0' then keep = tonumber(ARGV[2]) - now_ms() end
`

// luaDelete defines delete_lock(): the lock key deleted and its release
// published on its released channel (releasedChannel), for the acquires
// waiting on it (wake.go). PCALL: a user that may not publish there
// still releases, and its waiters poll. Reply 1.
const luaDelete = `
local function delete_lock()
  redis.call('DEL', KEYS[1])
  redis.pcall('PUBLISH', KEYS[1] .. '` + releasedSuffix + `', '')
  return 1
end
`

// luaRelease ends the release scripts of values that keep their own
// locked-at, once their check passed: while keep (ms; 0 or less: none)
// is ahead, the key's expiry is shortened to it, never lengthened; else
// the key is deleted (delete_lock). Reply 1.
const luaRelease = `
if keep > 0 then
  local pttl = redis.call('PTTL', KEYS[1])
  if pttl < 0 or keep < pttl then redis.call('PEXPIRE', KEYS[1], keep) end
  return 1
end
return delete_lock()
`

// checkNative is the owner check of a Handle's refresh and release, on
// either form of the native value: KEYS lock, counter; ARGV[1] owner,
// ARGV[2] token ("0": any), compared with the counter (span form) or the
// value's own (the earlier form). It returns from the script with {0,
// the value found or nil} when the lock is not that owner's (with that
// token); else it leaves the value in v and either span (span form) or
// at, its locked-at in server ms (the earlier form).
const checkNative = `
local v = redis.call('GET', KEYS[1])
if not v then return {0, false} end
local span, owner = string.match(v, '^(%d+) %a+ (.*)$')
local tok, at
if span then
  if ARGV[2] ~= '0' and redis.call('GET', KEYS[2]) ~= ARGV[2] then return {0, v} end
else
  tok, at, owner = string.match(v, '^(%d+) (%d+) (.*)$')
  if ARGV[2] ~= '0' and tok ~= ARGV[2] then return {0, v} end
end
if owner ~= ARGV[1] then return {0, v} end
`

// refreshNative (a Handle's): KEYS lock, counter; ARGV owner, token,
// at-most ms. Reply 1 or a checkNative refusal.
var refreshNative = goredis.NewScript(luaSpan + checkNative + `
if span then respan(v, span, tonumber(ARGV[3])) else redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return 1
`)

// releaseNative (a Handle's): KEYS lock, counter; ARGV owner, token,
// at-least ms ("0": none). As releaseValue (span form), or with the
// value's locked-at (the earlier form). Reply 1 or a checkNative
// refusal.
var releaseNative = goredis.NewScript(luaNow + luaSpan + checkNative + `
if span then return release_span(v, span, tonumber(ARGV[3])) end
local keep = 0
if ARGV[3] ~= '0' then keep = tonumber(at) + tonumber(ARGV[3]) - now_ms() end
` + luaRelease)

// luaISO formats server milliseconds as ShedLock's instant
// (2006-01-02T15:04:05.000Z), by the civil-from-days algorithm: the
// scripting sandbox has no os.date.
const luaISO = `
local function iso(ms)
  local s = math.floor(ms / 1000)
  local days, sod = math.floor(s / 86400), s % 86400
  local z = days + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local d = doy - math.floor((153 * mp + 2) / 5) + 1
  local m = mp < 10 and mp + 3 or mp - 9
  local y = yoe + era * 400
  if m <= 2 then y = y + 1 end
  return string.format('%04d-%02d-%02dT%02d:%02d:%02d.%03dZ', y, m, d,
    math.floor(sod / 3600), math.floor(sod % 3600 / 60), sod % 60, ms % 1000)
end
`

// acquireShedlock: KEYS lock; ARGV owner, at-most ms. ShedLock's own
// take, SET NX PX, with the value stamped on the server's clock. Reply
// the value written, or {value, pttl ms} when held.
var acquireShedlock = goredis.NewScript(luaNow + luaISO + `
local v = 'ADDED:' .. iso(now_ms()) .. '@' .. ARGV[1]
if redis.call('SET', KEYS[1], v, 'NX', 'PX', ARGV[2]) then return v end
return {redis.call('GET', KEYS[1]) or '', redis.call('PTTL', KEYS[1])}
`)

// checkShedlock is the owner check of a Handle on a ShedLock value:
// ARGV[1] the owner. It returns with {0, the value found or nil} when
// the lock is not that owner's.
const checkShedlock = `
local v = redis.call('GET', KEYS[1])
if not v then return {0, false} end
local at = string.find(v, '@', 1, true)
if not at or string.sub(v, at + 1) ~= ARGV[1] then return {0, v} end
`

// refreshShedlock (a Handle's): KEYS lock; ARGV owner, at-most ms.
// Reply 1 or a checkShedlock refusal.
var refreshShedlock = goredis.NewScript(checkShedlock + `
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`)

// releaseShedlock (a Handle's): KEYS lock; ARGV owner, at-least end
// (server ms, 0: none). As ShedLock's unlock: DEL once at-least has
// passed, else the expiry shortened to what at-least still needs. Reply
// 1 or a checkShedlock refusal.
var releaseShedlock = goredis.NewScript(luaNow + luaDelete + checkShedlock + luaKeepUntil + luaRelease)

// inspectScript: KEYS lock[, counter]. Reply {server now ms, pttl ms,
// expiry ms, value[, counter's value or nil]}, or {now, -2} when there is
// no key. The expiry is the key's own absolute one (PEXPIRETIME, Redis
// 7+; now + pttl before), so two reads of an untouched key agree to the
// millisecond.
var inspectScript = goredis.NewScript(luaNow + `
local now = now_ms()
local pttl = redis.call('PTTL', KEYS[1])
if pttl == -2 then return {now, -2} end
local exp = redis.pcall('PEXPIRETIME', KEYS[1])
if type(exp) ~= 'number' then exp = now + pttl end
local r = {now, pttl, exp, redis.call('GET', KEYS[1]) or ''}
if KEYS[2] then r[5] = redis.call('GET', KEYS[2]) end
return r
`)
