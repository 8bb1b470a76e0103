--[[
  Record the outcome of a group's handler calls on the integration's breaker. Each call counts
  once, whatever its item count. Which calls count depends on the state:
    closed:    every call; a success resets the consecutive failures (successes count before
               failures within one report: the order inside a batch is unknown, and a failure
               after the last success is the pessimistic reading); failures >= threshold opens
    open:      none: they are late answers to calls admitted before it opened
    half-open: probe calls only, i.e. calls carrying an item that holds a live probe slot (a late
               answer to a call admitted before the breaker opened, or to a probe of an earlier
               half-open period, holds none); a failure re-opens; successes >= needed closes
  One tenant cannot open it for all: while admission has seen a second tenant of the integration
  in the last minute, the failures that reach the threshold must come from more than one tenant
  (a call naming no tenant counts as from several). Otherwise the failing tenant's own scope
  (includes/tenantScopes) opens instead, with the same rules on that tenant's calls alone: closed,
  its consecutive failures >= threshold open it; open for the same duration; half-open, its probe
  call decides (a failure re-opens, successes >= needed close). Tenant scopes are told only
  while the integration's breaker is closed. A batch of several tenants that failed as a whole is
  called again by tenant first, so a call here carries one tenant's items unless it was answered.
  The calls' leases, probes and urgent markers are given back after this, by releaseHandler in
  the same round trip.
  Input:
    KEYS[1] breaker   hash: state, failures, successes, openedAt, halfOpenAt (absent = closed)
    KEYS[2] probes    sorted set itemId -> probe expiry (ms)
    KEYS[3] scopes    hash, the integration's tenant scopes (includes/tenantScopes)
    ARGV[1] now (ms)
    ARGV[2] failure threshold
    ARGV[3] breaker open duration (ms)
    ARGV[4] half-open successes needed to close
    ARGV[5..] the calls, each as 1 (the endpoint answered) or 0 (it failed), its item count n,
              its n itemIds, its tenant count t, its t tenantIds
  Output:
    { state after the report: 'closed' | 'open' | 'half_open',
      the transition it made: 1 opened (from closed or half-open), 2 closed (from half-open), 0 none,
      then pairs for the tenant scopes it changed: tenantId, 1 opened | 2 closed }
]]
local breakerKey = KEYS[1]
local probesKey = KEYS[2]
local scopesKey = KEYS[3]

local now = tonumber(ARGV[1])
local threshold = tonumber(ARGV[2])
local openMs = tonumber(ARGV[3])
local successesNeeded = tonumber(ARGV[4])
local FIRST_CALL = 5

--- @include "includes/advanceBreaker"
--- @include "includes/sliced"
--- @include "includes/tenantScopes"

-- How recently admission must have seen a second tenant for one tenant's failures to stay its own.
local OTHER_TENANT_MS = 60000

local breaker = advanceBreaker(breakerKey, probesKey, now, openMs)
local state = breaker.state

-- Probe slots are checked (and freed) here, before releaseHandler frees the rest.
local successes, failures = 0, 0
-- The tenants of the failed calls ('*' stands for calls naming none), and per tenant its calls.
local failingTenants, failingCount = {}, 0
local byTenant, tenantList = {}, {}
local call = FIRST_CALL
while call <= #ARGV do
  local answered = ARGV[call] == '1'
  local itemCount = tonumber(ARGV[call + 1])
  local firstItem = call + 2
  local tenantCount = tonumber(ARGV[firstItem + itemCount])
  local counts = state == 'closed'
  if state == 'half_open' and itemCount > 0 then
    counts = callSliced('ZREM', probesKey, ARGV, firstItem, firstItem + itemCount - 1) > 0
  end
  if counts and answered then
    successes = successes + 1
  elseif counts then
    failures = failures + 1
    if tenantCount == 0 and not failingTenants['*'] then
      failingTenants['*'] = true
      failingCount = failingCount + 1
    end
  end
  for t = 1, tenantCount do
    local tenant = ARGV[firstItem + itemCount + t]
    if not byTenant[tenant] then
      byTenant[tenant] = { successes = 0, failures = 0, calls = {} }
      tenantList[#tenantList + 1] = tenant
    end
    local told = byTenant[tenant]
    told.calls[#told.calls + 1] = { answered = answered, first = firstItem, last = firstItem + itemCount - 1 }
    if answered then
      told.successes = told.successes + 1
    else
      told.failures = told.failures + 1
      if counts and not failingTenants[tenant] then
        failingTenants[tenant] = true
        failingCount = failingCount + 1
      end
    end
  end
  call = firstItem + itemCount + 1 + tenantCount
end

local function open(consecutiveFailures)
  redis.call('HSET', breakerKey, 'state', 'open', 'openedAt', now, 'failures', consecutiveFailures, 'successes', 0)
  redis.call('HDEL', breakerKey, 'halfOpenAt', 'tenants')
  -- Open for every tenant: the tenant scopes and their counts start over when it closes.
  redis.call('DEL', probesKey, scopesKey)
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
    clearBreakerState(breakerKey)
    redis.call('DEL', probesKey)
    return { 'closed', 2 }
  end
  return { 'half_open', 0 }
end

local consecutive = breaker.failures
local runTenant = breaker.failTenant
if successes > 0 then
  consecutive, runTenant = 0, false
end
consecutive = consecutive + failures
for tenant in pairs(failingTenants) do
  if failingCount > 1 or (runTenant and runTenant ~= tenant) then
    runTenant = '*'
  elseif not runTenant then
    runTenant = tenant
  end
end
local otherTenantRecent = breaker.otherTenantAt ~= nil and now - breaker.otherTenantAt < OTHER_TENANT_MS
if consecutive >= threshold and (runTenant == '*' or not otherTenantRecent) then
  return open(consecutive)
end
if consecutive == 0 then
  if breaker.failures > 0 then
    clearBreakerState(breakerKey)
  end
else
  redis.call('HSET', breakerKey, 'state', 'closed', 'failures', consecutive, 'failTenant', runTenant or '*')
end

-- The tenant scopes, on each tenant's own calls.
local reply = { 'closed', 0 }
local function tell(tenant, transition)
  reply[#reply + 1] = tenant
  reply[#reply + 1] = transition
end
if #tenantList == 0 or (failures == 0 and not breaker.tenants) then
  return reply
end
local fields = {}
for _, tenant in ipairs(tenantList) do
  fields[#fields + 1] = 's:' .. tenant
  fields[#fields + 1] = 'f:' .. tenant
end
local values = redis.call('HMGET', scopesKey, unpack(fields))
local removed = false
for k, tenant in ipairs(tenantList) do
  local told = byTenant[tenant]
  local scope = parseScope(values[2 * k - 1])
  if scope then
    if now >= halfOpenAtOf(scope.openedAt, openMs) and scope.probe ~= '' then
      for _, c in ipairs(told.calls) do
        local carriesProbe = false
        for a = c.first, c.last do
          carriesProbe = carriesProbe or ARGV[a] == scope.probe
        end
        if carriesProbe and not c.answered then
          writeScope(scopesKey, tenant, { openedAt = now, successes = 0, probe = '', probeUntil = 0 })
          tell(tenant, 1)
          break
        elseif carriesProbe then
          scope.successes, scope.probe, scope.probeUntil = scope.successes + 1, '', 0
          if scope.successes >= successesNeeded then
            redis.call('HDEL', scopesKey, 's:' .. tenant)
            removed = true
            tell(tenant, 2)
          else
            writeScope(scopesKey, tenant, scope)
          end
          break
        end
      end
    end
  else
    local tenantFailures = told.successes > 0 and 0 or (tonumber(values[2 * k]) or 0)
    tenantFailures = tenantFailures + told.failures
    if tenantFailures >= threshold then
      writeScope(scopesKey, tenant, { openedAt = now, successes = 0, probe = '', probeUntil = 0 })
      redis.call('HDEL', scopesKey, 'f:' .. tenant)
      redis.call('HSET', breakerKey, 'tenants', 1)
      tell(tenant, 1)
    elseif tenantFailures > 0 then
      redis.call('HSET', scopesKey, 'f:' .. tenant, tenantFailures)
      redis.call('HSET', breakerKey, 'tenants', 1)
    elseif values[2 * k] then
      redis.call('HDEL', scopesKey, 'f:' .. tenant)
      removed = true
    end
  end
end
if removed then
  settleTenantsFlag(breakerKey, scopesKey)
end
return reply
