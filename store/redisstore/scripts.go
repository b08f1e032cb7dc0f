package redisstore

import "github.com/redis/go-redis/v9"

// The scripts run atomically in Redis: each operation is one script, one
// round trip (EVALSHA, or EVAL when the server has not cached the script
// yet). Every script starts with the prelude, which reads the server's
// clock once and defines how a record is loaded and judged; the package
// documentation describes them in prose.
//
// Lua 5.1 numbers are doubles: every time and generation is below 2^53
// (checked on load and in Go before a write), where doubles are exact.
// Numbers are formatted with string.format's %d, which converts to a
// 64-bit integer first (exact below 2^53, and cheaper than %.0f), never
// with tostring's %.14g. The
// scripts run on every request, so they stay lean: one table per record
// (the HMGET reply), no pcall, and every write before the first error a
// script can raise (WRONGTYPE from HMGET).

// prelude defines now (the server's time in µs since the epoch), load and
// binds.
const prelude = `
-- 2^53: times are below it, generations up to it. Strings of 16 digits
-- compare as their numbers do; longer ones are refused first.
local MAX, MAXSTR = 9007199254740992, '9007199254740992'
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]

-- A time field: '' is the zero time (-1 here, before any real time),
-- otherwise decimal µs since the epoch below 2^53 without leading zeros.
local function tm(x)
  if x == '' then return -1 end
  local n = #x
  if n > 16 or n == 16 and x >= MAXSTR or x ~= '0' and not string.find(x, '^[1-9]%d*$') then
    return nil
  end
  return tonumber(x)
end

-- load returns nil when key holds no record and false when it holds one
-- that does not parse. Otherwise it returns the record's fields as HMGET
-- replies them (g, s, l, e, r, n), its lease expiry, its expiry and the
-- end of its life, as numbers. A key of another type raises WRONGTYPE.
local function load(key)
  local f = redis.call('HMGET', key, 'g', 's', 'l', 'e', 'r', 'n')
  local g, s = f[1], f[2]
  if not (g and s and f[3] and f[4] and f[5]) then
    if g or s or f[3] or f[4] or f[5] or f[6] then return false end
    return nil
  end
  if #g > 16 or #g == 16 and g > MAXSTR or not string.find(g, '^[1-9]%d*$')
      or s ~= '0' and s ~= '1' and s ~= '2' then
    return false
  end
  local l, e = tm(f[3]), tm(f[4])
  if not l or not e then return false end
  if l > e then return f, l, e, l end
  return f, l, e, e
end

-- binds is exactly policy.Record.Binds, at now.
local function binds(f, l, e)
  local s = f[2]
  return s ~= '0' and (now < e or s == '1' and now < l)
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
// reserved, each 0 for none or the record's fields {g, s, l, e, r, n};
// {-1, now, i} KEYS[i] is corrupt; {-2, now} or {-3, now}.
const reserveSource = prelude + `
local nowstr = string.format('%d', now)
local p, pl, pe, pfin = load(KEYS[1])
if p == false then return {-1, nowstr, 1} end
local ended = nil -- a record whose life ended, not yet expired by Redis
if p and now >= pfin then ended, p = p, nil end
local n, nl, ne, nfin = nil, 0, 0, 0
if #KEYS > 1 then
  n, nl, ne, nfin = load(KEYS[2])
  if n == false then return {-1, nowstr, 2} end
  if n and now >= nfin then n = nil end
end
-- The same call again (a client's retry after a lost reply): its
-- reservation is unchanged since, as every write clears the nonce.
if p and p[2] == '1' and p[6] == ARGV[4] and now < pl then
  return {1, nowstr, p[1], p[3], p[4]}
end
if p and binds(p, pl, pe) or n and binds(n, nl, ne) then
  return {0, nowstr, p or 0, n or 0}
end
-- The next generation of the record replaced; a first one at the
-- store's time, or above the ended record's if the clock went back.
local g, prev = nowstr, p
if not p and ended and tonumber(ended[1]) >= now then prev = ended end
if prev then
  local gn = tonumber(prev[1])
  if gn >= MAX then return {-2, nowstr} end
  g = string.format('%d', gn + 1)
end
local ln, en = now + ARGV[1], now + ARGV[2]
if en >= MAX then return {-3, nowstr} end
local l, e = string.format('%d', ln), string.format('%d', en)
redis.call('HSET', KEYS[1], 'g', g, 's', '1', 'l', l, 'e', e, 'r', ARGV[3], 'n', ARGV[4])
-- The key goes at the end of the record's life, rounded up to the
-- millisecond (a life that ends at once, with a TTL under 1 µs, is over
-- for the scripts already).
if ln > en then en = ln end
redis.call('PEXPIREAT', KEYS[1], string.format('%d', math.floor((en + 999) / 1000)))
return {1, nowstr, g, l, e}
`

// writeScript: KEYS[1] the record's key, KEYS[2] the guard's key
// (optional); ARGV[1] generation, ARGV[2] the generation it replaces ('0':
// none), ARGV[3] state, ARGV[4] lease expiry, ARGV[5] expiry, ARGV[6]
// payload, ARGV[7] the guard's generation ('0': nothing binds there),
// ARGV[8] the end of the record's life (µs), ARGV[9] the same in ms,
// rounded up.
//
// Reply: 1 written or already there; 0 conflict; -1 or -2 KEYS[1] or
// KEYS[2] corrupt.
const writeSource = prelude + `
local c, cl, ce, cfin = load(KEYS[1])
if c == false then return -1 end
if c and now >= cfin then c = nil end
if c and ARGV[3] ~= '1' and c[1] == ARGV[1] and c[2] == ARGV[3] and c[3] == ARGV[4] and c[4] == ARGV[5] and c[5] == ARGV[6] then
  return 1 -- a completion or release already written; never a reservation, which may be another's
end
if (c and c[1] or '0') ~= ARGV[2] then return 0 end
if #KEYS > 1 then
  local o, ol, oe, ofin = load(KEYS[2])
  if o == false then return -2 end
  local b = o and now < ofin and binds(o, ol, oe)
  if ARGV[7] == '0' then
    if b then return 0 end
  elseif not b or o[1] ~= ARGV[7] then
    return 0
  end
end
redis.call('HSET', KEYS[1], 'g', ARGV[1], 's', ARGV[3], 'l', ARGV[4], 'e', ARGV[5], 'r', ARGV[6], 'n', '')
if tonumber(ARGV[8]) <= now then
  redis.call('DEL', KEYS[1])
else
  redis.call('PEXPIREAT', KEYS[1], ARGV[9])
end
return 1
`

// readScript: KEYS[1]. Reply: 0 none; the record's fields {g, s, l, e, r,
// n}; -1 corrupt.
const readSource = prelude + `
local c, cl, ce, cfin = load(KEYS[1])
if c == false then return -1 end
if c and now < cfin then return c end
return 0
`

// deleteScript: KEYS[1]. Reply: 1 deleted a record (alive or corrupt); 0
// none (a record whose life ended is removed too).
const deleteSource = prelude + `
local ok, c, cl, ce, cfin = pcall(load, KEYS[1])
if ok and c == nil then return 0 end
redis.call('DEL', KEYS[1])
if ok and c and now >= cfin then return 0 end
return 1
`

var (
	reserveScript = redis.NewScript(reserveSource)
	writeScript   = redis.NewScript(writeSource)
	readScript    = redis.NewScript(readSource)
	deleteScript  = redis.NewScript(deleteSource)
)
