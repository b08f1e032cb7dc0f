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
// with tostring's %.14g.
//
// The scripts run on every request, and under load each redis.call costs
// more than the Lua around it, so they make as few as they can: TIME, one
// GET per record, one SET ... PXAT per write. A record's value is parsed
// by one string.match over its header, never split further: the payload
// goes back to Go whole, in the value. GET is sent with redis.pcall,
// which costs the same as redis.call when it succeeds, so that a v1 hash
// (WRONGTYPE) falls back to HMGET instead of failing the script. Every
// write comes after the last error a script can raise (WRONGTYPE from
// HMGET, on a key that is neither a string nor a hash).

// prelude defines now (the server's time in µs since the epoch), load and
// binds.
const prelude = `
-- 2^53: times are below it, generations up to it. Strings of 16 digits
-- compare as their numbers do; longer ones are refused first.
local MAX, MAXSTR = 9007199254740992, '9007199254740992'
local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]

-- A time field of digits only: '' is the zero time (-1 here, before any
-- real time), otherwise µs since the epoch below 2^53 without leading
-- zeros.
local function tm(x)
  local n = #x
  if n == 0 then return -1 end
  if n > 16 or n == 16 and x >= MAXSTR or n > 1 and string.byte(x) == 48 then
    return nil
  end
  return tonumber(x)
end

-- load returns nil when key holds no record and false when it holds one
-- that does not parse. Otherwise it returns the value to reply to Go (the
-- string, or a v1 hash's fields as HMGET replies them: g, s, l, e, r, n),
-- the generation and state as strings, the lease expiry, the expiry and
-- the end of the record's life as numbers, and the nonce. A key of
-- neither type raises WRONGTYPE.
local function load(key)
  local v = redis.pcall('GET', key)
  if not v then return nil end
  local g, s, l, e, n
  if type(v) == 'string' then
    g, s, l, e, n = string.match(v, '^2 ([1-9]%d*) ([012]) (%d*) (%d*) (%x*)\n')
    if not g then return false end
  else
    -- Not a string: a v1 hash, judged by the v1 rules.
    v = redis.call('HMGET', key, 'g', 's', 'l', 'e', 'r', 'n')
    g, s, l, e, n = v[1], v[2], v[3], v[4], v[6]
    if not (g and s and l and e and v[5]) then
      if g or s or l or e or v[5] or n then return false end
      return nil
    end
    if not string.find(g, '^[1-9]%d*$') or s ~= '0' and s ~= '1' and s ~= '2'
        or not string.find(l, '^%d*$') or not string.find(e, '^%d*$') then
      return false
    end
  end
  if #g > 16 or #g == 16 and g > MAXSTR then return false end
  local ln, en = tm(l), tm(e)
  if not ln or not en then return false end
  if ln > en then return v, g, s, ln, en, ln, n end
  return v, g, s, ln, en, en, n
end

-- binds is exactly policy.Record.Binds, at now, of a record of state s.
local function binds(s, l, e)
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
// the call's nonce (hex).
//
// Reply: the string "now g l e" reserved (a string: Redis turns a table
// into a reply at a cost that shows, and this is the common reply);
// {0, now, primary, newIdentity} not reserved, each 0 for none or the
// record's value (a v1 hash's fields); {-1, now, i} KEYS[i] is corrupt;
// {-2, now} or {-3, now}.
const reserveSource = prelude + `
local nowstr = string.format('%d', now)
local p, pg, ps, pl, pe, pfin, pn = load(KEYS[1])
if p == false then return {-1, nowstr, 1} end
local ended = nil -- the generation of a record whose life ended, not yet expired by Redis
if p and now >= pfin then ended, p = pg, nil end
local n, ns, nl, ne, nfin
if #KEYS > 1 then
  local _
  n, _, ns, nl, ne, nfin = load(KEYS[2])
  if n == false then return {-1, nowstr, 2} end
  if n and now >= nfin then n = nil end
end
-- The same call again (a client's retry after a lost reply): its
-- reservation is unchanged since, as every write clears the nonce.
if p and ps == '1' and pn == ARGV[4] and now < pl then
  return nowstr .. ' ' .. pg .. ' ' .. string.format('%d', pl) .. ' ' .. string.format('%d', pe)
end
if p and binds(ps, pl, pe) or n and binds(ns, nl, ne) then
  return {0, nowstr, p or 0, n or 0}
end
-- The next generation of the record replaced; a first one at the
-- store's time, or above the ended record's if the clock went back.
local g, prev = nowstr, pg
if not p then
  prev = nil
  if ended and tonumber(ended) >= now then prev = ended end
end
if prev then
  local gn = tonumber(prev)
  if gn >= MAX then return {-2, nowstr} end
  g = string.format('%d', gn + 1)
end
local ln, en = now + ARGV[1], now + ARGV[2]
if en >= MAX then return {-3, nowstr} end
local l, e = string.format('%d', ln), string.format('%d', en)
-- The key goes at the end of the record's life, rounded up to the
-- millisecond (a life that ends at once, with a TTL under 1 µs, is over
-- for the scripts already).
if ln > en then en = ln end
redis.call('SET', KEYS[1], '2 ' .. g .. ' 1 ' .. l .. ' ' .. e .. ' ' .. ARGV[4] .. '\n' .. ARGV[3],
  'PXAT', string.format('%d', math.floor((en + 999) / 1000)))
return nowstr .. ' ' .. g .. ' ' .. l .. ' ' .. e
`

// writeScript: KEYS[1] the record's key, KEYS[2] the guard's key
// (optional); ARGV[1] the record's value, ARGV[2] its generation, ARGV[3]
// the generation it replaces ('0': none), ARGV[4] its state, ARGV[5] the
// guard's generation ('0': nothing binds there), ARGV[6] the end of the
// record's life (µs), ARGV[7] the same in ms, rounded up.
//
// Reply: 1 written or already there; 0 conflict; -1 or -2 KEYS[1] or
// KEYS[2] corrupt.
const writeSource = prelude + `
local c, cg, cs, cl, ce, cfin = load(KEYS[1])
if c == false then return -1 end
if c and now >= cfin then c = nil end
if not c then cg = '0' end
-- A completion or release already written, never a reservation, which
-- may be another's. A value holds every field, so equal values are equal
-- records; a v1 hash's are compared as the value they make.
if c and ARGV[4] ~= '1' and cg == ARGV[2] and cs == ARGV[4] then
  if type(c) == 'table' then c = '2 ' .. cg .. ' ' .. cs .. ' ' .. c[3] .. ' ' .. c[4] .. ' \n' .. c[5] end
  if c == ARGV[1] then return 1 end
end
if cg ~= ARGV[3] then return 0 end
if #KEYS > 1 then
  local o, og, os, ol, oe, ofin = load(KEYS[2])
  if o == false then return -2 end
  local b = o and now < ofin and binds(os, ol, oe)
  if ARGV[5] == '0' then
    if b then return 0 end
  elseif not b or og ~= ARGV[5] then
    return 0
  end
end
if tonumber(ARGV[6]) <= now then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[7])
end
return 1
`

// readScript: KEYS[1]. Reply: 0 none; the record's value (a v1 hash's
// fields); -1 corrupt.
const readSource = prelude + `
local c, cg, cs, cl, ce, cfin = load(KEYS[1])
if c == false then return -1 end
if c and now < cfin then return c end
return 0
`

// deleteScript: KEYS[1]. Reply: 1 deleted a record (alive or corrupt); 0
// none (a record whose life ended is removed too).
const deleteSource = prelude + `
local ok, c, cg, cs, cl, ce, cfin = pcall(load, KEYS[1])
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
