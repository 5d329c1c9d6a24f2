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
// is a string "<token> <locked_at ms> <owner>" (see nativeValue), set
// with PX only when the key is absent. Reply {1, token, locked_at ms}
// when taken; {0, value, pttl ms} when held.
var acquireNative = goredis.NewScript(luaNow + `
if redis.call('EXISTS', KEYS[1]) == 1 then return {0, redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1])} end
local now = now_ms()
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], string.format('%d %d %s', token, now, ARGV[1]), 'PX', ARGV[2])
return {1, token, now}
`)

// checkNative is the owner check of refresh and release: ARGV[1] owner,
// ARGV[2] token ("0": any). It returns from the script with -1 (no
// lock), -2 (another owner: reply {-2, owner}) or -3 (another token:
// {-3, token}); else it leaves the lock's locked-at in at.
const checkNative = `
local v = redis.call('GET', KEYS[1])
if not v then return {-1} end
local tok, at, owner = string.match(v, '^(%d+) (%d+) (.*)$')
if owner ~= ARGV[1] then return {-2, owner or v} end
if ARGV[2] ~= '0' and tok ~= ARGV[2] then return {-3, tonumber(tok)} end
`

// refreshNative: KEYS lock; ARGV owner, token, at-most ms. Reply {1} or
// a checkNative refusal.
var refreshNative = goredis.NewScript(checkNative + `
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {1}
`)

// releaseNative: KEYS lock; ARGV owner, token, at-least ms. The key is
// deleted, or kept until locked_at + at-least when that is still ahead
// (its expiry shortened, never lengthened); without an at-least ("0") the
// server's clock is not read. Reply {1, kept ms} or a checkNative refusal.
var releaseNative = goredis.NewScript(luaNow + checkNative + `
if ARGV[3] ~= '0' then
  local keep = tonumber(at) + tonumber(ARGV[3]) - now_ms()
  if keep > 0 then
    local pttl = redis.call('PTTL', KEYS[1])
    if pttl < 0 or keep < pttl then redis.call('PEXPIRE', KEYS[1], keep) end
    return {1, keep}
  end
end
redis.call('DEL', KEYS[1])
return {1, 0}
`)

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
// {1, value, locked_at ms} when taken, {0, value, pttl ms} when held.
var acquireShedlock = goredis.NewScript(luaNow + luaISO + `
local now = now_ms()
local v = 'ADDED:' .. iso(now) .. '@' .. ARGV[1]
if redis.call('SET', KEYS[1], v, 'NX', 'PX', ARGV[2]) then
  return {1, v, now}
end
return {0, redis.call('GET', KEYS[1]) or '', redis.call('PTTL', KEYS[1])}
`)

// checkShedlock is the owner check of a ShedLock value: ARGV[1] owner,
// ARGV[2] the exact value written by the acquire ("": any value of that
// owner). It returns with -1 (no lock), -2 (another owner: {-2, value})
// or -3 (the owner's, but from another acquire: {-3, value}); else v is
// the value.
const checkShedlock = `
local v = redis.call('GET', KEYS[1])
if not v then return {-1} end
local at = string.find(v, '@', 1, true)
if not at or string.sub(v, at + 1) ~= ARGV[1] then return {-2, v} end
if ARGV[2] ~= '' and v ~= ARGV[2] then return {-3, v} end
`

// refreshShedlock: KEYS lock; ARGV owner, value, at-most ms.
var refreshShedlock = goredis.NewScript(checkShedlock + `
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {1}
`)

// releaseShedlock: KEYS lock; ARGV owner, value, at-least end (server
// ms, 0: none). As ShedLock's unlock: DEL once at-least has passed, else
// the expiry shortened to what at-least still needs.
var releaseShedlock = goredis.NewScript(luaNow + checkShedlock + `
local keep = tonumber(ARGV[3]) - now_ms()
if keep > 0 then
  local pttl = redis.call('PTTL', KEYS[1])
  if pttl < 0 or keep < pttl then redis.call('PEXPIRE', KEYS[1], keep) end
  return {1, keep}
end
redis.call('DEL', KEYS[1])
return {1, 0}
`)

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
var scripts = []*goredis.Script{acquireNative, refreshNative, releaseNative, acquireShedlock, refreshShedlock, releaseShedlock, inspectScript}
