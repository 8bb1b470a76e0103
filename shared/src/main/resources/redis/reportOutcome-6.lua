--[[
  Record the outcome of a group's handler calls on the integration's breaker and release their
  leases, probes and urgent markers. Each call counts once, whatever its item count. Which calls count depends on
  the state:
    closed:    every call; a success resets the consecutive failures (successes count before
               failures within one report: the order inside a batch is unknown, and a failure
               after the last success is the pessimistic reading); failures >= threshold opens
    open:      none: they are late answers to calls admitted before it opened
    half-open: probe calls only, i.e. calls carrying an item that holds a live probe slot (a late
               answer to a call admitted before the breaker opened, or to a probe of an earlier
               half-open period, holds none); a failure re-opens; successes >= needed closes
  Input:
    KEYS[1] breaker   hash: state, failures, successes, openedAt, halfOpenAt (absent = closed)
    KEYS[2] probes    sorted set itemId -> probe expiry (ms)
    KEYS[3] leases    sorted set token:expectedEndMs -> lease expiry (ms)
    KEYS[4] urgent    sorted set itemId -> until when (ms) an urgent item waits or runs
    KEYS[5] waiters   string, present while a worker waits for a lease of this handler
    KEYS[6] freed     list, the doorbell: one ring per lease given back while one waits
    ARGV[1] now (ms)
    ARGV[2] failure threshold
    ARGV[3] breaker open duration (ms)
    ARGV[4] half-open successes needed to close
    ARGV[5] number of lease tokens released, l
    ARGV[6..] the l lease tokens; then m, the number of admitted itemIds whose probes and urgent
              markers are released, and the m itemIds; then the calls, each as 1 (the endpoint
              answered) or 0 (it failed), its item count n, its n itemIds
  Output:
    { state after the report: 'closed' | 'open' | 'half_open',
      the transition it made: 1 opened (from closed or half-open), 2 closed (from half-open), 0 none }
]]
local breakerKey = KEYS[1]
local probesKey = KEYS[2]
local leasesKey = KEYS[3]
local urgentKey = KEYS[4]
local waitersKey = KEYS[5]
local freedKey = KEYS[6]

local now = tonumber(ARGV[1])
local threshold = tonumber(ARGV[2])
local openMs = tonumber(ARGV[3])
local successesNeeded = tonumber(ARGV[4])
local tokenCount = tonumber(ARGV[5])
local FIRST_TOKEN = 6
local itemCountAt = FIRST_TOKEN + tokenCount
local releasedCount = tonumber(ARGV[itemCountAt])
local FIRST_RELEASED = itemCountAt + 1
local FIRST_CALL = FIRST_RELEASED + releasedCount

--- @include "includes/advanceBreaker"
--- @include "includes/sliced"
--- @include "includes/ringFreed"

local breaker = advanceBreaker(breakerKey, probesKey, now, openMs)
local state = breaker.state

-- Probe slots are checked (and freed) before the release below frees the rest.
local successes, failures = 0, 0
local call = FIRST_CALL
while call <= #ARGV do
  local answered = ARGV[call] == '1'
  local itemCount = tonumber(ARGV[call + 1])
  local counts = state == 'closed'
  if state == 'half_open' and itemCount > 0 then
    counts = callSliced('ZREM', probesKey, ARGV, call + 2, call + 1 + itemCount) > 0
  end
  if counts and answered then
    successes = successes + 1
  elseif counts then
    failures = failures + 1
  end
  call = call + 2 + itemCount
end

if tokenCount > 0 then
  ringFreed(waitersKey, freedKey, callSliced('ZREM', leasesKey, ARGV, FIRST_TOKEN, itemCountAt - 1))
end
if releasedCount > 0 then
  -- Probes exist only while half-open (opening and closing delete them).
  if state == 'half_open' then
    callSliced('ZREM', probesKey, ARGV, FIRST_RELEASED, FIRST_CALL - 1)
  end
  callSliced('ZREM', urgentKey, ARGV, FIRST_RELEASED, FIRST_CALL - 1)
end

local function open(consecutiveFailures)
  redis.call('HSET', breakerKey, 'state', 'open', 'openedAt', now, 'failures', consecutiveFailures, 'successes', 0)
  redis.call('HDEL', breakerKey, 'halfOpenAt')
  redis.call('DEL', probesKey)
  return { 'open', 1 }
end

if state == 'open' then
  return { 'open', 0 }
end

if state == 'half_open' then
  if failures > 0 then
    return open(failures)
  end
  if successes > 0 and redis.call('HINCRBY', breakerKey, 'successes', successes) >= successesNeeded then
    -- Absent = closed with no failures.
    redis.call('DEL', breakerKey, probesKey)
    return { 'closed', 2 }
  end
  return { 'half_open', 0 }
end

local consecutive = breaker.failures
if successes > 0 then
  consecutive = 0
end
consecutive = consecutive + failures
if consecutive >= threshold then
  return open(consecutive)
end
if consecutive == 0 then
  if breaker.failures > 0 then
    redis.call('DEL', breakerKey)
  end
else
  redis.call('HSET', breakerKey, 'state', 'closed', 'failures', consecutive)
end
return { 'closed', 0 }
