/**
 * The resume stash's Lua scripts. Each token has a hash (KEYS[1]: state 'open' or 'taken', the
 * owner, `settings`, `meta` = the rest of the entry but its history, `w` = the mark of the last
 * write, `taker` = the nonce of the take) and a list of the history's messages as JSON texts (KEYS[2]). A tombstone
 * ('taken') keeps both for the resume window, so a take whose answer was lost can be undone.
 * Entries written before the list existed hold the whole entry in the hash's `data` field.
 */

/**
 * Saves any number of entries in one call. KEYS: each entry's hash and list. ARGV: the ttl, then
 * per entry: its message count n, owner, meta, settings ('' for unchanged), expect, mark, keep,
 * then its n messages. With `expect` '' a full rewrite; else the list is cut to its first `keep`
 * and the messages appended, but only on top of the write marked `expect`. Returns per entry 1 saved, 0 taken,
 * 2 not on top of `expect` (to be written in full).
 */
export const SAVE = `
local out, a = {}, 2
for k = 1, #KEYS, 2 do
  local h, l = KEYS[k], KEYS[k + 1]
  local expect, first = ARGV[a + 4], a + 7
  local last = first + tonumber(ARGV[a]) - 1
  local v = redis.call('HMGET', h, 'state', 'w')
  local r = 1
  if v[1] == 'taken' then
    r = 0
  elseif expect ~= '' and (v[1] ~= 'open' or v[2] ~= expect) then
    r = 2
  else
    if expect == '' then
      redis.call('DEL', l)
    else
      redis.call('LTRIM', l, 0, tonumber(ARGV[a + 6]) - 1)
    end
    for i = first, last, 1000 do redis.call('RPUSH', l, unpack(ARGV, i, math.min(i + 999, last))) end
    redis.call('HSET', h, 'state', 'open', 'owner', ARGV[a + 1], 'meta', ARGV[a + 2], 'w', ARGV[a + 5])
    if ARGV[a + 3] ~= '' then redis.call('HSET', h, 'settings', ARGV[a + 3]) end
    redis.call('HDEL', h, 'data')
    redis.call('PEXPIRE', h, ARGV[1])
    redis.call('PEXPIRE', l, ARGV[1])
  end
  out[#out + 1] = r
  a = last + 1
end
return out`;

// Atomic single use: of two processes taking one token at the same moment, exactly one gets it.
// The same take run again (a client-library retry after a reconnect) gets the same answer.
// ARGV: owner, ttl, nonce. Returns {0} unknown, {1} not the owner, {2, meta, messages, settings},
// {3, data}.
export const TAKE = `
local v = redis.call('HMGET', KEYS[1], 'state', 'owner', 'meta', 'taker', 'data', 'settings')
local function entry()
  if v[5] then return {3, v[5]} end
  return {2, v[3], redis.call('LRANGE', KEYS[2], 0, -1), v[6]}
end
if v[1] == 'taken' and v[4] == ARGV[3] then return entry() end
if v[1] ~= 'open' then return {0} end
if v[2] ~= ARGV[1] then return {1} end
redis.call('HSET', KEYS[1], 'state', 'taken', 'taker', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return entry()`;

// Undoes the take with this nonce, if that take happened (its answer never arrived).
export const UNTAKE = `
if redis.call('HGET', KEYS[1], 'taker') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', 'open')
redis.call('HDEL', KEYS[1], 'taker')
return 1`;

// ARGV: ttl, owner, meta, settings, messages... A full rewrite, whatever the state; no writer's
// mark matches.
export const GIVE_BACK = `
redis.call('DEL', KEYS[2])
for i = 5, #ARGV, 1000 do redis.call('RPUSH', KEYS[2], unpack(ARGV, i, math.min(i + 999, #ARGV))) end
redis.call('HSET', KEYS[1], 'state', 'open', 'owner', ARGV[2], 'meta', ARGV[3], 'settings', ARGV[4], 'w', '')
redis.call('HDEL', KEYS[1], 'taker', 'data')
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return 1`;

export const DISCARD = `
if redis.call('HGET', KEYS[1], 'state') ~= 'taken' then redis.call('DEL', KEYS[1], KEYS[2]) end
return 1`;
