--[[
  Record the outcome of a group's handler calls on the integration's breaker and release their
  leases and probes. Each call counts once, whatever its item count. Which calls count depends on
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
    KEYS[3] leases    sorted set itemId -> lease expiry (ms)
    ARGV[1] now (ms)
    ARGV[2] failure threshold
    ARGV[3] breaker open duration (ms)
    ARGV[4] half-open successes needed to close
    ARGV[5] number of released itemIds, r
    ARGV[6..] the r itemIds whose leases and probes are released; then the calls, each as
              1 (the endpoint answered) or 0 (it failed), its item count n, its n itemIds
  Output:
    { state after the report: 'closed' | 'open' | 'half_open' }
]]
local breakerKey = KEYS[1]
local probesKey = KEYS[2]
local leasesKey = KEYS[3]

local now = tonumber(ARGV[1])
local threshold = tonumber(ARGV[2])
local openMs = tonumber(ARGV[3])
local successesNeeded = tonumber(ARGV[4])
local releasedCount = tonumber(ARGV[5])
local FIRST_RELEASED = 6
local FIRST_CALL = FIRST_RELEASED + releasedCount

--- @include "includes/advanceBreaker"
--- @include "includes/sliced"

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

if releasedCount > 0 then
  callSliced('ZREM', leasesKey, ARGV, FIRST_RELEASED, FIRST_CALL - 1)
  -- Probes exist only while half-open (opening and closing delete them).
  if state == 'half_open' then
    callSliced('ZREM', probesKey, ARGV, FIRST_RELEASED, FIRST_CALL - 1)
  end
end

local function open(consecutiveFailures)
  redis.call('HSET', breakerKey, 'state', 'open', 'openedAt', now, 'failures', consecutiveFailures, 'successes', 0)
  redis.call('HDEL', breakerKey, 'halfOpenAt')
  redis.call('DEL', probesKey)
  return { 'open' }
end

if state == 'open' then
  return { 'open' }
end

if state == 'half_open' then
  if failures > 0 then
    return open(failures)
  end
  if successes > 0 and redis.call('HINCRBY', breakerKey, 'successes', successes) >= successesNeeded then
    -- Absent = closed with no failures.
    redis.call('DEL', breakerKey, probesKey)
    return { 'closed' }
  end
  return { 'half_open' }
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
return { 'closed' }
