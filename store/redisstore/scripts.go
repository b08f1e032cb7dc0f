package redisstore

import "github.com/redis/go-redis/v9"

// The scripts run atomically in Redis: each operation is one script, one
// round trip (EVALSHA, or EVAL when the server has not cached the script
// yet). Every script starts with the prelude, which reads the server's
// clock once and defines how a record is loaded and judged; the package
// documentation describes them in prose.
//
// Lua 5.1 numbers are doubles: every time and generation is below 2^53
// (checked on load and in Go before a write), where doubles are exact,
// and numbers are formatted with %.0f, never tostring's %.14g.

// prelude defines now (the server's time in µs since the epoch, as a number
// and as a decimal string), load, alive and binds.
const prelude = `
-- 2^53: times are below it, generations up to it. Strings of 16 digits
-- compare as their numbers do; longer ones are refused first.
local MAX, MAXSTR = 9007199254740992, '9007199254740992'
local t = redis.call('TIME')
local nowstr = t[1] .. string.format('%06d', tonumber(t[2]))
local now = tonumber(nowstr)

-- A time field: '' is the zero time (-1 here, before any real time),
-- otherwise decimal µs since the epoch below 2^53 without leading zeros.
local function tm(x)
  if x == '' then return -1 end
  if x ~= '0' and not string.find(x, '^[1-9]%d*$') or #x > 16 or #x == 16 and x >= MAXSTR then
    return nil
  end
  return tonumber(x)
end

-- load returns nil when key holds no record, false when it holds one that
-- does not parse, and the record otherwise.
local function load(key)
  local f = redis.pcall('HMGET', key, 'g', 's', 'l', 'e', 'r', 'n')
  if f.err then return false end
  local g, s, l, e, r = f[1], f[2], f[3], f[4], f[5]
  if not (g or s or l or e or r or f[6]) then return nil end
  if not (g and s and l and e and r) then return false end
  if not string.find(g, '^[1-9]%d*$') or #g > 16 or #g == 16 and g > MAXSTR then return false end
  if s ~= '0' and s ~= '1' and s ~= '2' then return false end
  local gn = tonumber(g)
  local ln, en = tm(l), tm(e)
  if not ln or not en then return false end
  return {g = g, gn = gn, s = s, l = l, ln = ln, e = e, en = en, r = r, n = f[6], fin = math.max(ln, en)}
end

-- alive: the record's life has not ended (policy: a record whose life
-- ended is no record). binds: exactly policy.Record.Binds.
local function alive(rec) return now < rec.fin end
local function binds(rec)
  return rec.s ~= '0' and (now < rec.en or rec.s == '1' and now < rec.ln)
end

-- expire sets the key to go at the end of the record's life, rounded up
-- to the millisecond; a record whose life already ended goes now.
local function expire(key, fin)
  if fin <= now then
    redis.call('DEL', key)
  else
    redis.call('PEXPIREAT', key, string.format('%.0f', math.floor((fin + 999) / 1000)))
  end
end

local function fields(rec)
  if not rec then return 0 end
  return {rec.g, rec.s, rec.l, rec.e, rec.r}
end
`

// Reply codes shared by the scripts.
const (
	codeConflict   = 0  // nothing written: the condition does not hold
	codeOK         = 1  // written, or found written
	codeCorrupt    = -1 // a record does not parse; the reply names which key
	codeExhausted  = -2 // the generation cannot count further
	codeOutOfRange = -3 // the expiry is beyond the times the store keeps
)

// reserveScript: KEYS[1] the primary key, KEYS[2] the new identity
// (optional); ARGV[1] lease µs, ARGV[2] TTL µs, ARGV[3] payload, ARGV[4]
// the call's nonce.
//
// Reply: {1, now, g, l, e} reserved; {0, now, primary, newIdentity} not
// reserved, each 0 or {g, s, l, e, r}; {-1, now, i} KEYS[i] is corrupt;
// {-2, now} or {-3, now}.
var reserveScript = redis.NewScript(prelude + `
local p = load(KEYS[1])
if p == false then return {-1, nowstr, 1} end
local ended = nil -- a record whose life ended, not yet expired by Redis
if p and not alive(p) then ended, p = p, nil end
local n = nil
if #KEYS > 1 then
  n = load(KEYS[2])
  if n == false then return {-1, nowstr, 2} end
  if n and not alive(n) then n = nil end
end
-- The same call again (a client's retry after a lost reply): its
-- reservation is unchanged since, as every write clears the nonce.
if p and p.s == '1' and p.n == ARGV[4] and now < p.ln then
  return {1, nowstr, p.g, p.l, p.e}
end
if p and binds(p) or n and binds(n) then
  return {0, nowstr, fields(p), fields(n)}
end
-- The next generation of the record replaced; a first one at the
-- store's time, or above the ended record's if the clock went back.
local g, prev = nowstr, p
if not p and ended and ended.gn >= now then prev = ended end
if prev then
  if prev.gn >= MAX then return {-2, nowstr} end
  g = string.format('%.0f', prev.gn + 1)
end
local ln, en = now + tonumber(ARGV[1]), now + tonumber(ARGV[2])
if en >= MAX then return {-3, nowstr} end
local l, e = string.format('%.0f', ln), string.format('%.0f', en)
redis.call('HSET', KEYS[1], 'g', g, 's', '1', 'l', l, 'e', e, 'r', ARGV[3], 'n', ARGV[4])
expire(KEYS[1], math.max(ln, en))
return {1, nowstr, g, l, e}
`)

// writeScript: KEYS[1] the record's key, KEYS[2] the guard's key
// (optional); ARGV[1] generation, ARGV[2] the generation it replaces ('0':
// none), ARGV[3] state, ARGV[4] lease expiry, ARGV[5] expiry, ARGV[6]
// payload, ARGV[7] the guard's generation ('0': nothing binds there).
//
// Reply: 1 written or already there; 0 conflict; -1 or -2 KEYS[1] or
// KEYS[2] corrupt.
var writeScript = redis.NewScript(prelude + `
local c = load(KEYS[1])
if c == false then return -1 end
if c and not alive(c) then c = nil end
if c and c.g == ARGV[1] and c.s == ARGV[3] and c.l == ARGV[4] and c.e == ARGV[5] and c.r == ARGV[6] then
  return 1
end
if (c and c.g or '0') ~= ARGV[2] then return 0 end
if #KEYS > 1 then
  local o = load(KEYS[2])
  if o == false then return -2 end
  local b = o and alive(o) and binds(o)
  if ARGV[7] == '0' then
    if b then return 0 end
  elseif not b or o.g ~= ARGV[7] then
    return 0
  end
end
redis.call('HSET', KEYS[1], 'g', ARGV[1], 's', ARGV[3], 'l', ARGV[4], 'e', ARGV[5], 'r', ARGV[6])
redis.call('HDEL', KEYS[1], 'n')
expire(KEYS[1], math.max(tm(ARGV[4]), tm(ARGV[5])))
return 1
`)

// readScript: KEYS[1]. Reply: 0 none; {g, s, l, e, r}; -1 corrupt.
var readScript = redis.NewScript(prelude + `
local c = load(KEYS[1])
if c == false then return -1 end
if c and not alive(c) then c = nil end
return fields(c)
`)

// deleteScript: KEYS[1]. Reply: 1 deleted a record (alive or corrupt); 0
// none (a record whose life ended is removed too).
var deleteScript = redis.NewScript(prelude + `
local c = load(KEYS[1])
if c == nil then return 0 end
redis.call('DEL', KEYS[1])
if c and not alive(c) then return 0 end
return 1
`)
