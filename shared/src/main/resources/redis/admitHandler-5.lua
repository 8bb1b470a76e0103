--[[
  Admit the items of one (integration, handler) group: pause flag, the integration's circuit
  breaker, the handler's concurrency and rate. An item passes every check or takes nothing: a
  deferred item holds no lease, no rate entry and no probe.
  Priority: items with priority > ARGV[8] may fill only limit - ceil(limit / 4) of the
  concurrency and of the rate (when the limit is at least 2); that share stays for urgent items.
  Input:
    KEYS[1] breaker   hash: state, failures, successes, openedAt, halfOpenAt (absent = closed)
    KEYS[2] probes    sorted set itemId -> probe expiry (ms), half-open only
    KEYS[3] paused    string, present = handler paused
    KEYS[4] leases    sorted set itemId -> lease expiry (ms)
    KEYS[5] rate      sorted set itemId:admittedAt -> admission time (ms), the last minute: one
                      entry per admission, so retries of one item count each time
    ARGV[1] now (ms)
    ARGV[2] breaker open duration (ms)
    ARGV[3] probes allowed in flight while half-open
    ARGV[4] concurrency limit, 0 = unlimited
    ARGV[5] rate limit per minute, 0 = unlimited
    ARGV[6] lease ttl (ms)
    ARGV[7] retry delay (ms) for concurrency and probing deferrals
    ARGV[8] urgent priority: items at or below it may use the whole limit
    ARGV[9..] pairs: itemId, priority
  Output:
    two entries per item, in input order: code, delay (ms); the codes (AdmitCode on the Java side)
      0 admitted, 1 paused, 2 breaker open, 3 breaker probing, 4 handler rate, 5 handler concurrency
    then, unless paused or open, one more: 1 if the breaker is closed with no failure counted (a report
    of successes alone would change nothing), else 0
]]
local breakerKey = KEYS[1]
local probesKey = KEYS[2]
local pausedKey = KEYS[3]
local leasesKey = KEYS[4]
local rateKey = KEYS[5]

local now = tonumber(ARGV[1])
local openMs = tonumber(ARGV[2])
local maxProbes = tonumber(ARGV[3])
local concurrency = tonumber(ARGV[4])
local ratePerMinute = tonumber(ARGV[5])
local leaseTtl = tonumber(ARGV[6])
local retryMs = tonumber(ARGV[7])
local urgentPriority = tonumber(ARGV[8])
local FIRST_ITEM = 9

local ADMITTED, PAUSED, BREAKER_OPEN, BREAKER_PROBING, HANDLER_RATE, HANDLER_CONCURRENCY = 0, 1, 2, 3, 4, 5
local MINUTE = 60000

--- @include "includes/advanceBreaker"
--- @include "includes/sliced"

local itemCount = (#ARGV - FIRST_ITEM + 1) / 2
local result = {}

local function decideAll(code, delay)
  for i = 1, itemCount do
    result[2 * i - 1] = code
    result[2 * i] = delay
  end
  return result
end

local function nonUrgentLimit(limit)
  if limit < 2 then
    return limit
  end
  return limit - math.ceil(limit / 4)
end

if redis.call('EXISTS', pausedKey) == 1 then
  return decideAll(PAUSED, 0)
end

local breaker = advanceBreaker(breakerKey, probesKey, now, openMs)
local state = breaker.state
local clean = (state == 'closed' and breaker.failures == 0) and 1 or 0
if state == 'open' then
  return decideAll(BREAKER_OPEN, breaker.halfOpenAt - now)
end

-- -1: no probe bound (closed)
local probeRoom = -1
if state == 'half_open' then
  redis.call('ZREMRANGEBYSCORE', probesKey, '-inf', now)
  probeRoom = maxProbes - redis.call('ZCARD', probesKey)
end

local leases = 0
if concurrency > 0 then
  redis.call('ZREMRANGEBYSCORE', leasesKey, '-inf', now)
  leases = redis.call('ZCARD', leasesKey)
end
local inWindow = 0
if ratePerMinute > 0 then
  redis.call('ZREMRANGEBYSCORE', rateKey, '-inf', now - MINUTE)
  inWindow = redis.call('ZCARD', rateKey)
end

local newLeases, newRates, newProbes = {}, {}, {}
local rateDeferred = 0

-- Rate entries of this call are written before a deferral reads the window's order.
local function writeRates()
  if #newRates > 0 then
    callSliced('ZADD', rateKey, newRates, 1, #newRates, 2)
    newRates = {}
  end
end

for i = 1, itemCount do
  local itemId = ARGV[FIRST_ITEM + 2 * (i - 1)]
  local urgent = tonumber(ARGV[FIRST_ITEM + 2 * (i - 1) + 1]) <= urgentPriority
  local concurrencyLimit = urgent and concurrency or nonUrgentLimit(concurrency)
  local rateLimit = urgent and ratePerMinute or nonUrgentLimit(ratePerMinute)
  local code, delay = ADMITTED, 0
  if probeRoom == 0 then
    code, delay = BREAKER_PROBING, retryMs
  elseif concurrency > 0 and leases >= concurrencyLimit then
    code, delay = HANDLER_CONCURRENCY, retryMs
  elseif ratePerMinute > 0 and inWindow >= rateLimit then
    -- Room comes when the entry that many places ahead leaves the window; deferred items of
    -- this call queue behind each other instead of all coming back at once.
    local ahead = inWindow - rateLimit + rateDeferred
    if ahead < inWindow then
      writeRates()
      local entry = redis.call('ZRANGE', rateKey, ahead, ahead, 'WITHSCORES')
      delay = tonumber(entry[2]) + MINUTE - now
    else
      delay = MINUTE * (1 + math.floor((ahead - inWindow) / rateLimit))
    end
    code, delay = HANDLER_RATE, math.max(delay, 1)
    rateDeferred = rateDeferred + 1
  else
    if concurrency > 0 then
      newLeases[#newLeases + 1] = now + leaseTtl
      newLeases[#newLeases + 1] = itemId
      leases = leases + 1
    end
    if ratePerMinute > 0 then
      newRates[#newRates + 1] = now
      newRates[#newRates + 1] = itemId .. ':' .. now
      inWindow = inWindow + 1
    end
    if probeRoom > 0 then
      newProbes[#newProbes + 1] = now + leaseTtl
      newProbes[#newProbes + 1] = itemId
      probeRoom = probeRoom - 1
    end
  end
  result[2 * i - 1] = code
  result[2 * i] = delay
end

if #newLeases > 0 then
  callSliced('ZADD', leasesKey, newLeases, 1, #newLeases, 2)
  redis.call('PEXPIRE', leasesKey, leaseTtl)
end
if ratePerMinute > 0 and inWindow > 0 then
  writeRates()
  redis.call('PEXPIRE', rateKey, MINUTE)
end
if #newProbes > 0 then
  callSliced('ZADD', probesKey, newProbes, 1, #newProbes, 2)
  redis.call('PEXPIRE', probesKey, leaseTtl)
end
result[2 * itemCount + 1] = clean
return result
