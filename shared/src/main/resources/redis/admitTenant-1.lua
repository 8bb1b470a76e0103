--[[
  A tenant's sliding window over windowMs, with reservations: an item over the limit gets the
  first future time at which the window has room for it, and that time is written into the
  window as its slot. Later items queue behind those slots, so a backlog spreads over future
  windows and each deferred item comes back about once. An item that comes back at or after its
  slot is admitted on it (no second count).
  Exactness: the set holds every slot after now - windowMs, future ones included. A new slot at
  time t is given only if the `limit` slots before it span at least windowMs, so no window ever
  holds more than `limit` slots.
  Input:
    KEYS[1] window    sorted set itemId -> slot time (ms)
    ARGV[1] now (ms)
    ARGV[2] window length (ms)
    ARGV[3] limit per window
    ARGV[4] shortest deferral (ms)
    ARGV[5..] itemIds
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
local FIRST_ITEM = 5

--- @include "includes/sliced"

local ids = {}
for i = FIRST_ITEM, #ARGV do
  ids[#ids + 1] = ARGV[i]
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

local result = {}
for i, itemId in ipairs(ids) do
  local slot = slots[i] and tonumber(slots[i])
  if slot then
    result[i] = slot - now
  elseif count < limit then
    pending[#pending + 1] = now
    pending[#pending + 1] = itemId
    count = count + 1
    result[i] = 0
  else
    writePending()
    local entry = redis.call('ZRANGE', windowKey, count - limit, count - limit, 'WITHSCORES')
    local slotAt = math.max(tonumber(entry[2]) + windowMs, now + shortestMs)
    redis.call('ZADD', windowKey, slotAt, itemId)
    count = count + 1
    result[i] = slotAt - now
  end
end
writePending()

local last = redis.call('ZRANGE', windowKey, -1, -1, 'WITHSCORES')
if last[2] then
  redis.call('PEXPIRE', windowKey, math.max(tonumber(last[2]) - now, 0) + windowMs)
end
return result
