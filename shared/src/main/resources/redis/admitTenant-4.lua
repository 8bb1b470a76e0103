--[[
  Admit a tenant's items into its sliding window, each now or on a slot reserved for it, by
  priority: the worker's admission and a producer's reservation at the source are this one call.
  The window (includes/tenantSlots) holds every slot after now - windowMs, future ones included;
  no window of windowMs ever holds more than `limit` slots.
  * An item that already has a slot is admitted on it once it is due; one back early waits for
    the rest.
  * An item of a lower priority (a backlog) is admitted now while the window gives out slots at
    once (all but a quarter of the limit), else it takes the earliest future slot of an item of a
    still lower priority (a manual item passes a schedule backlog), else it reserves the next slot,
    paced (includes/tenantSlots). A slot further ahead than the horizon (ARGV[5]; 0 = none) is not
    reserved: the item is held (its producer keeps it in Postgres until its slots come near).
  * An item of the most urgent priority (a webhook) is admitted now when every window holding now
    has room, or when giving up a future slot of a lower-priority item makes that room
    (includes/urgentRoom); else it takes the earliest future slot of a lower-priority item; else
    it reserves the next slot. The item that gives up its slot gets one behind every reservation,
    as if it came now, and learns so when it comes back to its old slot. A due slot is never taken.
  Future slots of each lower priority are also kept in that priority's backlog set, where a more
  urgent item looks for one to take.
  Input:
    KEYS[1] window    sorted set member -> slot time (ms)
    KEYS[2] backlog   sorted set member -> future slot (ms) of the items of the priority ARGV[6]
    KEYS[3] backlog   the same for the priority ARGV[7]
    KEYS[4] backlog   the same for the priority ARGV[8]
    ARGV[1] now (ms)
    ARGV[2] window length (ms)
    ARGV[3] limit per window
    ARGV[4] shortest deferral (ms)
    ARGV[5] horizon (ms): a lower-priority item whose slot would lie further ahead is held; 0 = none
    ARGV[6] the priority of KEYS[2]
    ARGV[7] the priority of KEYS[3]
    ARGV[8] the priority of KEYS[4]
    ARGV[9..] pairs: member (the itemId, then @ and its run's tag), priority
  Output:
    two entries per item, in input order: an outcome and a time (ms)
      0, 0      admitted now
      1, delay  a slot reserved `delay` ahead: the item comes back to it
      2, age    admitted on the slot it already had, due `age` ago
      3, 0      held: its slot would lie beyond the horizon; nothing reserved
]]
local windowKey = KEYS[1]

local now = tonumber(ARGV[1])
local windowMs = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local shortestMs = tonumber(ARGV[4])
local horizonMs = tonumber(ARGV[5])
local FIRST_ITEM = 9
local NOW, RESERVED, ON_SLOT, HELD = 0, 1, 2, 3
-- Stale backlog entries (a slot given back since) skipped per search before giving up on displacing.
local STALE_SKIPS = 16
-- The window's entries after now - windowMs, future ones included.
local count = 0

--- @include "includes/sliced"
--- @include "includes/tenantSlots"
--- @include "includes/allButAQuarter"
--- @include "includes/urgentRoom"

local backlogOf = {}
for l = 1, #KEYS - 1 do
  backlogOf[tonumber(ARGV[5 + l])] = KEYS[1 + l]
end

local members, priorities = {}, {}
for i = FIRST_ITEM, #ARGV, 2 do
  members[#members + 1] = ARGV[i]
  priorities[#priorities + 1] = tonumber(ARGV[i + 1])
end

redis.call('ZREMRANGEBYSCORE', windowKey, '-inf', now - windowMs)
local slots = scoresSliced(windowKey, members, 1, #members)
count = redis.call('ZCARD', windowKey)

-- Admissions at `now`, written in one ZADD before anything reads the set again.
local pending = {}
local function writePending()
  if #pending > 0 then
    callSliced('ZADD', windowKey, pending, 1, #pending, 2)
    pending = {}
  end
end

local function admitNow(member)
  pending[#pending + 1] = now
  pending[#pending + 1] = member
  count = count + 1
end

-- Backlog sets written (their expiry follows the window's), and items admitted on their slot per set.
local touched, admittedOnSlot = {}, {}

local function place(member, priority, at)
  redis.call('ZADD', windowKey, at, member)
  count = count + 1
  local backlog = backlogOf[priority]
  if backlog and at > now then
    redis.call('ZADD', backlog, at, member)
    touched[backlog] = true
  end
end

local function giveUp(victim)
  redis.call('ZREM', windowKey, victim.member)
  redis.call('ZREM', victim.key, victim.member)
  count = count - 1
end

-- A future slot of an item of lower priority than `priority`, still its (the window holds it at
-- that time): the earliest, or with upTo the latest at or before it. Nil when there is none.
local function lowerSlot(priority, upTo)
  local best = nil
  for level, key in pairs(backlogOf) do
    if level > priority then
      for _ = 1, STALE_SKIPS do
        local found
        if upTo then
          found = redis.call('ZREVRANGEBYSCORE', key, upTo, '(' .. now, 'WITHSCORES', 'LIMIT', 0, 1)
        else
          found = redis.call('ZRANGEBYSCORE', key, '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
        end
        if not found[1] then
          break
        end
        local at = tonumber(found[2])
        if tonumber(redis.call('ZSCORE', windowKey, found[1]) or -1) == at then
          if best == nil or (upTo and at > best.at) or (not upTo and at < best.at) then
            best = { key = key, member = found[1], at = at, level = level }
          end
          break
        end
        redis.call('ZREM', key, found[1])
      end
    end
  end
  return best
end

local result = {}
for i, member in ipairs(members) do
  local slot = slots[i] and tonumber(slots[i])
  local priority = priorities[i]
  local backlog = backlogOf[priority]
  local outcome, at = nil, 0
  if slot and slot <= now then
    outcome, at = ON_SLOT, now - slot
    if backlog then
      admittedOnSlot[backlog] = admittedOnSlot[backlog] or {}
      table.insert(admittedOnSlot[backlog], member)
    end
  elseif slot then
    outcome, at = RESERVED, math.ceil(slot - now)
  elseif backlog then
    -- A backlog takes all but a quarter of a window at once; the rest of each window comes paced.
    if count < allButAQuarter(limit) then
      admitNow(member)
      outcome = NOW
    else
      writePending()
      local victim = lowerSlot(priority, nil)
      if victim then
        giveUp(victim)
        place(member, priority, victim.at)
        place(victim.member, victim.level, nextSlot())
        outcome, at = RESERVED, math.ceil(victim.at - now)
      else
        local slotAt = nextSlot()
        if horizonMs > 0 and slotAt > now + horizonMs then
          outcome = HELD
        else
          place(member, priority, slotAt)
          outcome, at = RESERVED, math.ceil(slotAt - now)
        end
      end
    end
  elseif count < limit then
    admitNow(member)
    outcome = NOW
  else
    writePending()
    local fullAt = firstFullWindow()
    local victim = nil
    if fullAt == nil then
      place(member, priority, now)
      outcome = NOW
    elseif fullAt > now then
      victim = lowerSlot(priority, fullAt)
      if victim then
        giveUp(victim)
        place(member, priority, now)
        outcome = NOW
      end
    end
    if outcome == nil then
      victim = lowerSlot(priority, nil)
      if victim then
        giveUp(victim)
        place(member, priority, victim.at)
        outcome, at = RESERVED, math.ceil(victim.at - now)
      else
        local slotAt = nextSlot()
        place(member, priority, slotAt)
        outcome, at = RESERVED, math.ceil(slotAt - now)
      end
    end
    if victim then
      place(victim.member, victim.level, nextSlot())
    end
  end
  result[2 * i - 1] = outcome
  result[2 * i] = at
end
writePending()
for key, admitted in pairs(admittedOnSlot) do
  callSliced('ZREM', key, admitted, 1, #admitted)
end

local latest = slotAt(-1)
if latest then
  local ttl = math.ceil(math.max(latest - now, 0) + windowMs)
  redis.call('PEXPIRE', windowKey, ttl)
  for key in pairs(touched) do
    redis.call('PEXPIRE', key, ttl)
  end
end
return result
