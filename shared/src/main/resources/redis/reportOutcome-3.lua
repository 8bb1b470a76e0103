--[[
  Record the outcome of a group's handler calls on the integration's breaker and release their
  leases and probes. Successes count before failures within one report (the order inside a
  batch is unknown; a failure after the last success is the pessimistic reading).
    closed:    any success resets the consecutive failures; failures >= threshold opens
    open:      outcomes are late answers from before it opened; ignored
    half-open: a failure re-opens; successes >= needed closes
  Input:
    KEYS[1] breaker   hash: state, failures, successes, openedAt, halfOpenAt (absent = closed)
    KEYS[2] probes    sorted set itemId -> probe expiry (ms)
    KEYS[3] leases    sorted set itemId -> lease expiry (ms)
    ARGV[1] now (ms)
    ARGV[2] failure threshold
    ARGV[3] breaker open duration (ms)
    ARGV[4] half-open successes needed to close
    ARGV[5] successes in this report
    ARGV[6] failures in this report
    ARGV[7..] itemIds whose leases and probes are released
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
local successes = tonumber(ARGV[5])
local failures = tonumber(ARGV[6])
local FIRST_ITEM = 7

local function open(consecutiveFailures)
  redis.call('HSET', breakerKey, 'state', 'open', 'openedAt', now, 'failures', consecutiveFailures, 'successes', 0)
  redis.call('HDEL', breakerKey, 'halfOpenAt')
  redis.call('DEL', probesKey)
  return { 'open' }
end

local breaker = redis.call('HMGET', breakerKey, 'state', 'openedAt', 'failures')
local state = breaker[1] or 'closed'

if #ARGV >= FIRST_ITEM then
  redis.call('ZREM', leasesKey, unpack(ARGV, FIRST_ITEM))
  -- Probes exist only while half-open (opening and closing delete them).
  if state ~= 'closed' then
    redis.call('ZREM', probesKey, unpack(ARGV, FIRST_ITEM))
  end
end

if state == 'open' then
  local halfOpenAt = tonumber(breaker[2]) + openMs
  if now < halfOpenAt then
    return { 'open' }
  end
  redis.call('HSET', breakerKey, 'state', 'half_open', 'halfOpenAt', halfOpenAt, 'successes', 0)
  redis.call('DEL', probesKey)
  state = 'half_open'
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

local consecutive = tonumber(breaker[3]) or 0
if successes > 0 then
  consecutive = 0
end
consecutive = consecutive + failures
if consecutive >= threshold then
  return open(consecutive)
end
if consecutive == 0 then
  if breaker[1] then
    redis.call('DEL', breakerKey)
  end
else
  redis.call('HSET', breakerKey, 'state', 'closed', 'failures', consecutive)
end
return { 'closed' }
