--[[
  A tenant's sliding window over windowMs, with reservations, by priority: an item over the
  limit gets the first future time at which the window has room for it, and that time is written
  into the window as its slot. Later items queue behind those slots, so a backlog spreads over
  future windows and each deferred item comes back about once. An item that comes back at or
  after its slot is admitted on it (no second count).
  Priority: a future slot of an item of a lower priority (a higher number) is kept in that
  priority's backlog set as well. An item that finds the window full takes the earliest future
  slot held by an item of a lower priority than its own (a webhook passes its tenant's manual
  backlog), and the item it displaces is given a slot behind every reservation, as if it came
  now: it learns so when it comes back to its old slot, and comes back once more. Within one
  priority, first come first served. A slot that is due (at or before now) is never displaced:
  its item may be admitted on it.
  Urgent share, work-conserving: while the tenant has had an item of the most urgent priority in
  the last 15 minutes (KEYS[5]), lower-priority items may fill only limit - ceil(limit / 4) of
  any window (limits of at least 2), and an urgent item is admitted now whenever every window
  holding now has room, future reservations or not: a webhook does not wait for the end of the
  minute its tenant's backlog filled.
  Exactness: the set holds every slot after now - windowMs, future ones included. A new slot at
  time t is given only if the `limit` slots before it span at least windowMs, and a displacement
  swaps two items on one slot, so no window ever holds more than `limit` slots.
  Input:
    KEYS[1] window    sorted set itemId -> slot time (ms)
    KEYS[2] backlog   sorted set itemId -> future slot (ms) of the items of the priority ARGV[5]
    KEYS[3] backlog   the same for the priority ARGV[6]
    KEYS[4] backlog   the same for the priority ARGV[7] (one set per priority below the most urgent)
    KEYS[5] urgent    string, present while the tenant has had a most urgent item lately
    ARGV[1] now (ms)
    ARGV[2] window length (ms)
    ARGV[3] limit per window
    ARGV[4] shortest deferral (ms)
    ARGV[5] the priority of KEYS[2]
    ARGV[6] the priority of KEYS[3]
    ARGV[7] the priority of KEYS[4]
    ARGV[8..] pairs: itemId, priority
  Output:
    one entry per item, in input order: 0 = admitted now, a positive delay (ms) until its slot, or,
    for an item that already had a slot now past, minus its age (ms): admitted on it, and the caller
    knows when the slot leaves the window
]]
local windowKey = KEYS[1]

local now = tonumber(ARGV[1])
local windowMs = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local shortestMs = tonumber(ARGV[4])
local levels = #KEYS - 2
local urgentKey = KEYS[#KEYS]
local URGENT_KEPT_MS = 900000
local FIRST_ITEM = 8
-- Stale backlog entries (a slot given back since) skipped per search before giving up on displacing.
local STALE_SKIPS = 16

--- @include "includes/sliced"

local backlogOf = {}
for l = 1, levels do
  backlogOf[tonumber(ARGV[4 + l])] = KEYS[1 + l]
end

local ids, priorities = {}, {}
for i = FIRST_ITEM, #ARGV, 2 do
  ids[#ids + 1] = ARGV[i]
  priorities[#priorities + 1] = tonumber(ARGV[i + 1])
end

redis.call('ZREMRANGEBYSCORE', windowKey, '-inf', now - windowMs)
local slots = scoresSliced(windowKey, ids, 1, #ids)
local count = redis.call('ZCARD', windowKey)

-- Admissions at `now` are written in one ZADD, before any reservation reads the set.
local pending = {}
local function writePending()
  if #pending > 0 then
    callSliced('ZADD', windowKey, pending, 1, #pending, 2)
    pending = {}
  end
end

-- Per backlog set: items admitted on their slot (no longer to be displaced), and whether it was written.
local admittedOnSlot, touched = {}, {}

-- Whether the urgent share is kept (read at most once, and only when it would matter).
local shareHeld = nil
local function limitFor(priority, used)
  local shared = limit - math.ceil(limit / 4)
  if backlogOf[priority] == nil or limit < 2 or used < shared then
    return limit
  end
  if shareHeld == nil then
    shareHeld = redis.call('EXISTS', urgentKey) == 1
  end
  return shareHeld and shared or limit
end

-- The next slot behind every reservation: a window after the slot its own limit's worth back,
-- so a window holding the new slot holds at most that limit (it starts after that slot).
local function reserve(itemId, priority)
  local ownLimit = limitFor(priority, count)
  local entry = redis.call('ZRANGE', windowKey, count - ownLimit, count - ownLimit, 'WITHSCORES')
  local slotAt = math.max(tonumber(entry[2]) + windowMs, now + shortestMs)
  redis.call('ZADD', windowKey, slotAt, itemId)
  count = count + 1
  if backlogOf[priority] then
    redis.call('ZADD', backlogOf[priority], slotAt, itemId)
    touched[backlogOf[priority]] = true
  end
  return slotAt
end

-- The earliest future slot of an item of lower priority than `priority`: its set, item, slot.
local function displaceable(priority)
  local best = nil
  for level, key in pairs(backlogOf) do
    if level > priority then
      for _ = 1, STALE_SKIPS do
        local first = redis.call('ZRANGEBYSCORE', key, '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
        if not first[1] then
          break
        end
        local at = tonumber(first[2])
        if tonumber(redis.call('ZSCORE', windowKey, first[1]) or -1) == at then
          if best == nil or at < best.at then
            best = { key = key, level = level, itemId = first[1], at = at }
          end
          break
        end
        redis.call('ZREM', key, first[1])
      end
    end
  end
  return best
end

-- Whether every window holding now has room for one more: the slots in (now - windowMs, now +
-- windowMs), past and reserved, counted in each window (x - windowMs, x] that holds now; the
-- count peaks at now or where a slot enters.
local function roomNow()
  writePending()
  local scores = redis.call('ZRANGEBYSCORE', windowKey, '(' .. (now - windowMs), '(' .. (now + windowMs), 'WITHSCORES')
  local times = {}
  for k = 2, #scores, 2 do
    times[#times + 1] = tonumber(scores[k])
  end
  local lo, hi = 1, 0
  local function fits(x)
    while hi < #times and times[hi + 1] <= x do
      hi = hi + 1
    end
    while lo <= hi and times[lo] <= x - windowMs do
      lo = lo + 1
    end
    return hi - lo + 1 < limit
  end
  if not fits(now) then
    return false
  end
  for k = 1, #times do
    if times[k] > now and not fits(times[k]) then
      return false
    end
  end
  return true
end

local anyUrgent = false
for i = 1, #ids do
  anyUrgent = anyUrgent or backlogOf[priorities[i]] == nil
end
if anyUrgent then
  redis.call('SET', urgentKey, 1, 'PX', URGENT_KEPT_MS)
end

local result = {}
for i, itemId in ipairs(ids) do
  local slot = slots[i] and tonumber(slots[i])
  local priority = priorities[i]
  if slot then
    result[i] = slot - now
    local key = backlogOf[priority]
    if slot <= now and key then
      admittedOnSlot[key] = admittedOnSlot[key] or {}
      table.insert(admittedOnSlot[key], itemId)
    end
  elseif count < limitFor(priority, count) or (backlogOf[priority] == nil and roomNow()) then
    pending[#pending + 1] = now
    pending[#pending + 1] = itemId
    count = count + 1
    result[i] = 0
  else
    writePending()
    local victim = displaceable(priority)
    if victim then
      redis.call('ZADD', windowKey, victim.at, itemId)
      redis.call('ZREM', windowKey, victim.itemId)
      redis.call('ZREM', victim.key, victim.itemId)
      if backlogOf[priority] then
        redis.call('ZADD', backlogOf[priority], victim.at, itemId)
        touched[backlogOf[priority]] = true
      end
      reserve(victim.itemId, victim.level)
      result[i] = victim.at - now
    else
      result[i] = reserve(itemId, priority) - now
    end
  end
end
writePending()
for key, admitted in pairs(admittedOnSlot) do
  callSliced('ZREM', key, admitted, 1, #admitted)
end

local last = redis.call('ZRANGE', windowKey, -1, -1, 'WITHSCORES')
if last[2] then
  local ttl = math.max(tonumber(last[2]) - now, 0) + windowMs
  redis.call('PEXPIRE', windowKey, ttl)
  for key in pairs(touched) do
    redis.call('PEXPIRE', key, ttl)
  end
end
return result
