package redis

import goredis "github.com/redis/go-redis/v9"

// The scripts run atomically on the server, one round trip each (EVALSHA;
// go-redis falls back to EVAL, which loads the script again, when a
// restarted server answers NOSCRIPT). Every time they use is the server's:
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

// acquireNative: KEYS lock, counter; ARGV owner, at-most ms. The lock
// is a string "<token> <locked_at ms> <owner>" (see parseNativeValue),
// set with PX only when the key is absent. Reply: the value written, when
// taken; {value, pttl ms} when held (nothing written then).
var acquireNative = goredis.NewScript(acquireNativeLua)

const acquireNativeLua = luaNow + `
if redis.call('EXISTS', KEYS[1]) == 1 then return {redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1])} end
local v = string.format('%d %d %s', redis.call('INCR', KEYS[2]), now_ms(), ARGV[1])
redis.call('SET', KEYS[1], v, 'PX', ARGV[2])
return v
`

// refreshExact is the refresh of a lease this process acquired, on
// either layout: KEYS lock; ARGV the exact value the acquire wrote,
// at-most ms. Reply 1 when the value is still there (its expiry reset to
// at-most from the server's now); else {0, the value found or nil}.
var refreshExact = goredis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v ~= ARGV[1] then return {0, v} end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`)

// releaseExact is the release of a lease this process acquired, on
// either layout: KEYS lock; ARGV the exact value the acquire wrote, the
// server time (ms) at-least keeps the lock until ("0": none). The key is
// deleted, or kept until then when that is still ahead (its expiry
// shortened, never lengthened); without at-least the server's clock is
// not read. Reply 1, or {0, the value found or nil}.
var releaseExact = goredis.NewScript(luaNow + `
local v = redis.call('GET', KEYS[1])
if v ~= ARGV[1] then return {0, v} end
local keep_until = tonumber(ARGV[2])
` + luaRelease)

// luaRelease ends every release script once its check passed: while
// keep_until (server ms; 0: none, and then no clock is read) is still
// ahead, the key's expiry is shortened to it, never lengthened; else the
// key is deleted. Reply 1.
const luaRelease = `
if keep_until > 0 then
  local keep = keep_until - now_ms()
  if keep > 0 then
    local pttl = redis.call('PTTL', KEYS[1])
    if pttl < 0 or keep < pttl then redis.call('PEXPIRE', KEYS[1], keep) end
    return 1
  end
end
redis.call('DEL', KEYS[1])
return 1
`

// checkNative is the owner check of a Handle's refresh and release:
// ARGV[1] owner, ARGV[2] token ("0": any). It returns from the script
// with {0, the value found or nil} when the lock is not that owner's
// (with that token); else it leaves the lock's locked-at in at.
const checkNative = `
local v = redis.call('GET', KEYS[1])
if not v then return {0, false} end
local tok, at, owner = string.match(v, '^(%d+) (%d+) (.*)$')
if owner ~= ARGV[1] or ARGV[2] ~= '0' and tok ~= ARGV[2] then return {0, v} end
`

// refreshNative (a Handle's): KEYS lock; ARGV owner, token, at-most ms.
// Reply 1 or a checkNative refusal.
var refreshNative = goredis.NewScript(checkNative + `
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`)

// releaseNative (a Handle's): KEYS lock; ARGV owner, token, at-least ms.
// The key is deleted, or kept until locked_at + at-least when that is
// still ahead (its expiry shortened, never lengthened); without an
// at-least ("0") the server's clock is not read. Reply 1 or a
// checkNative refusal.
var releaseNative = goredis.NewScript(luaNow + checkNative + `
local keep_until = 0
if ARGV[3] ~= '0' then keep_until = tonumber(at) + tonumber(ARGV[3]) end
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
// as acquireNative's: the value written, or {value, pttl ms} when held.
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
var releaseShedlock = goredis.NewScript(luaNow + checkShedlock + `
local keep_until = tonumber(ARGV[2])
` + luaRelease)

// inspectScript: KEYS lock. Reply {server now ms, pttl ms, expiry ms,
// value}. pttl is -2 when there is no key. The expiry
// is the key's own absolute one (PEXPIRETIME, Redis 7+; now + pttl
// before), so two reads of an untouched key agree to the millisecond.
var inspectScript = goredis.NewScript(luaNow + `
local now = now_ms()
local pttl = redis.call('PTTL', KEYS[1])
if pttl == -2 then return {now, -2} end
local exp = redis.pcall('PEXPIRETIME', KEYS[1])
if type(exp) ~= 'number' then exp = now + pttl end
return {now, pttl, exp, redis.call('GET', KEYS[1]) or ''}
`)

// scripts are every script, loaded once when a backend opens.
var scripts = []*goredis.Script{acquireNative, refreshExact, releaseExact, refreshNative, releaseNative,
	acquireShedlock, refreshShedlock, releaseShedlock, inspectScript}
