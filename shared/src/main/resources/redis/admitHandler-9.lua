--[[
  Admit the items of one (integration, handler) group: pause flag, the integration's circuit
  breaker, the handler's concurrency (calls in flight) and rate (items per minute). An item
  passes every check or takes nothing: a deferred item holds no rate entry and no probe.
  Concurrency is counted in calls, not items: the caller gets k leases and runs the admitted items
  through k lanes, one call after another, so a handler limited to 4 calls in flight gets 4 calls
  in flight whatever the batch holds. With no lease free, every item waits for the one expected
  back first: each lease records when its lane expects to be done (lanes give their leases back
  as they run out of calls, not all at the end). A holder already late is asked again after a
  quarter of a call, not at once.
  Tenant scopes (includes/tenantScopes, rules in reportOutcome): while a tenant's own scope of
  the breaker is open, its items are deferred until it goes half-open; half-open, one of its items
  at a time is admitted as its probe (until ARGV[12] at most), the others wait as probing. Other
  tenants' items are not held back. Admission also notes when it sees a second tenant of the
  integration (the breaker's lastTenant, lastTenantAt, otherTenantAt; written at most every 10 s).
  Fair share across tenants: while admission has seen a second tenant of the integration in the
  last minute, the leases held by one tenant's admissions stop at ceil(limit / 2) (limits >= 2).
  Priority, work-conserving: items with priority > ARGV[8] may fill only limit - ceil(limit / 4)
  of the concurrency and of the rate (limits of at least 2), but only while urgent items of this
  handler wait or run (KEYS[6]); with none around, a backlog uses the whole limit.
  Input:
    KEYS[1] breaker   hash: state, failures, successes, openedAt, halfOpenAt (absent = closed)
    KEYS[2] probes    sorted set itemId -> probe expiry (ms), half-open only
    KEYS[3] paused    string, present = handler paused
    KEYS[4] leases    sorted set token:expectedEndMs -> lease expiry (ms), one per call slot
    KEYS[5] rate      sorted set itemId:admittedAt -> admission time (ms), the last minute: one
                      entry per admission, so retries of one item count each time
    KEYS[6] urgent    sorted set itemId -> until when (ms) an urgent item waits or runs
    KEYS[7] waiters   string, present while a worker waits for a lease: the concurrency limit
                      (reportOutcome and releaseHandler then ring the doorbell, see includes/ringFreed)
    KEYS[8] freed     list, the doorbell: emptied when no lease is free (any ring in it is stale)
    KEYS[9] scopes    hash, the integration's tenant scopes (includes/tenantScopes)
    ARGV[1] now (ms)
    ARGV[2] breaker open duration (ms)
    ARGV[3] probes allowed in flight while half-open
    ARGV[4] concurrency limit in calls, 0 = unlimited
    ARGV[5] rate limit in items per minute, 0 = unlimited
    ARGV[6] lease ttl (ms): a lease or probe whose holder never reports frees after it
    ARGV[7] shortest deferral (ms)
    ARGV[8] urgent priority: items at or below it may use the whole limit
    ARGV[9] items per call (1, or the handler's batch size)
    ARGV[10] lease token prefix, unique to this admission, then ~tenantId when the group's items are
             all of one tenant (whose leases the fair share counts)
    ARGV[11] expected duration of one call (ms), the caller's estimate
    ARGV[12] how long an admitted urgent item may run (ms): the caller's time left
    ARGV[13..] triples: itemId, priority, tenantId
  Output:
    two entries per item, in input order: code, delay (ms); the codes (AdmitCode on the Java side)
      0 admitted, 1 paused, 2 breaker open, 3 breaker probing, 4 handler rate, 5 handler concurrency
    then 1 if the breaker is closed with no failure counted and nothing else needs a report (a
    report of successes alone would change nothing), else 0;
    then 1 if the breaker is half-open, else 0 (an open breaker shows in the codes);
    then k, the leases granted (0 when concurrency is unlimited), and e1 .. ek, when each lane is
    expected to be done (ms): the lease members are ARGV[10]:1:e1 .. ARGV[10]:k:ek
]]
local breakerKey = KEYS[1]
local probesKey = KEYS[2]
local pausedKey = KEYS[3]
local leasesKey = KEYS[4]
local rateKey = KEYS[5]
local urgentKey = KEYS[6]
local waitersKey = KEYS[7]
local freedKey = KEYS[8]
local scopesKey = KEYS[9]

local now = tonumber(ARGV[1])
local openMs = tonumber(ARGV[2])
local maxProbes = tonumber(ARGV[3])
local concurrency = tonumber(ARGV[4])
local ratePerMinute = tonumber(ARGV[5])
local leaseTtl = tonumber(ARGV[6])
local shortestMs = tonumber(ARGV[7])
local urgentPriority = tonumber(ARGV[8])
local itemsPerCall = tonumber(ARGV[9])
local tokenPrefix = ARGV[10]
local callMs = tonumber(ARGV[11])
local urgentHoldMs = tonumber(ARGV[12])
local FIRST_ITEM = 13

local ADMITTED, PAUSED, BREAKER_OPEN, BREAKER_PROBING, HANDLER_RATE, HANDLER_CONCURRENCY = 0, 1, 2, 3, 4, 5
local MINUTE = 60000
-- An urgent item deferred keeps the share this long past its return, to be admitted on it.
local URGENT_RETURN_GRACE = 5000
-- How often admission rewrites that it sees a second tenant of the integration.
local OTHER_TENANT_REFRESH = 10000
-- How recently a second tenant must have been seen for the leases' fair share to apply.
local OTHER_TENANT_ABOUT = 60000

--- @include "includes/advanceBreaker"
--- @include "includes/sliced"
--- @include "includes/tenantScopes"

local itemCount = (#ARGV - FIRST_ITEM + 1) / 3
local result = {}

local function decideAll(code, delay)
  for i = 1, itemCount do
    result[2 * i - 1] = code
    result[2 * i] = delay
  end
  result[2 * itemCount + 1] = 0
  result[2 * itemCount + 2] = 0
  result[2 * itemCount + 3] = 0
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
if state == 'open' then
  return decideAll(BREAKER_OPEN, breaker.halfOpenAt - now)
end

local ids, urgent, tenantOf = {}, {}, {}
local anyUrgent = false
for i = 1, itemCount do
  ids[i] = ARGV[FIRST_ITEM + 3 * (i - 1)]
  urgent[i] = tonumber(ARGV[FIRST_ITEM + 3 * (i - 1) + 1]) <= urgentPriority
  tenantOf[i] = ARGV[FIRST_ITEM + 3 * (i - 1) + 2]
  anyUrgent = anyUrgent or urgent[i]
end

-- A second tenant seen: the report then lets one tenant's failures open only that tenant's scope.
local seenOther = false
for i = 1, itemCount do
  if tenantOf[i] ~= (breaker.lastTenant or tenantOf[1]) then
    seenOther = tenantOf[i]
  end
end
if seenOther and (breaker.otherTenantAt == nil or now - breaker.otherTenantAt >= OTHER_TENANT_REFRESH) then
  redis.call('HSET', breakerKey, 'lastTenant', seenOther, 'otherTenantAt', now, 'lastTenantAt', now)
elseif breaker.lastTenantAt == nil or now - breaker.lastTenantAt >= OTHER_TENANT_REFRESH then
  redis.call('HSET', breakerKey, 'lastTenant', tenantOf[1], 'lastTenantAt', now)
end

-- Items held by their tenant's scope: i -> { code, delay }; tenant -> index of its probe candidate.
local scoped, probeCandidate = {}, {}
local tenantsNotClean = false
local passing = itemCount
if breaker.tenants then
  local distinct, fields, seen = {}, {}, {}
  for i = 1, itemCount do
    if not seen[tenantOf[i]] then
      seen[tenantOf[i]] = true
      distinct[#distinct + 1] = tenantOf[i]
      fields[#fields + 1] = 's:' .. tenantOf[i]
      fields[#fields + 1] = 'f:' .. tenantOf[i]
    end
  end
  local values = redis.call('HMGET', scopesKey, unpack(fields))
  local scopeOf = {}
  for k, tenant in ipairs(distinct) do
    if values[2 * k - 1] or values[2 * k] then
      tenantsNotClean = true
    end
    scopeOf[tenant] = parseScope(values[2 * k - 1])
  end
  for i = 1, itemCount do
    local scope = scopeOf[tenantOf[i]]
    if scope then
      local halfOpenAt = halfOpenAtOf(scope.openedAt, openMs)
      if now < halfOpenAt then
        scoped[i] = { BREAKER_OPEN, halfOpenAt - now }
      elseif (scope.probe == '' or scope.probeUntil <= now) and probeCandidate[tenantOf[i]] == nil then
        probeCandidate[tenantOf[i]] = i
      else
        scoped[i] = { BREAKER_PROBING, shortestMs }
      end
      if scoped[i] then
        passing = passing - 1
      end
    end
  end
end
local limited = concurrency > 0 or ratePerMinute > 0

-- Whether the urgent share is held: urgent items in this call, or any waiting or running.
-- Read at most once, and only when a non-urgent item would need the share.
local shareHeld = nil
local function shareReserved()
  if shareHeld == nil then
    if anyUrgent then
      shareHeld = true
    else
      redis.call('ZREMRANGEBYSCORE', urgentKey, '-inf', now)
      shareHeld = redis.call('ZCARD', urgentKey) > 0
    end
  end
  return shareHeld
end

-- -1: no probe bound (closed)
local probeRoom = -1
if state == 'half_open' then
  redis.call('ZREMRANGEBYSCORE', probesKey, '-inf', now)
  probeRoom = maxProbes - redis.call('ZCARD', probesKey)
end

-- Concurrency first, in calls: with no lease free for even one call, every item waits for the
-- lease expected back first, and nothing else is taken.
local leasesHeld, leaseRoom = 0, 0
if concurrency > 0 then
  redis.call('ZREMRANGEBYSCORE', leasesKey, '-inf', now)
  leasesHeld = redis.call('ZCARD', leasesKey)
  local limit = concurrency
  local callsAtMost = math.ceil(passing / itemsPerCall)
  if not anyUrgent and leasesHeld + callsAtMost > nonUrgentLimit(concurrency) and shareReserved() then
    limit = nonUrgentLimit(concurrency)
  end
  leaseRoom = limit - leasesHeld
  -- A fair share across tenants: while another tenant of the integration is about, the leases of
  -- one tenant's admissions stop at half the limit (a tenant whose calls hang until their timeout
  -- cannot hold them all), so the others keep the other half. Alone, a tenant uses the whole limit.
  local soleTenant = string.match(tokenPrefix, '^[^~]*~(.*)$')
  local function recent(at)
    return at ~= nil and now - at < OTHER_TENANT_ABOUT
  end
  -- Another tenant about: the last one seen, lately, or the one this tenant followed, lately.
  local otherTenantAbout = (breaker.lastTenant and breaker.lastTenant ~= soleTenant and recent(breaker.lastTenantAt))
    or (breaker.lastTenant == soleTenant and recent(breaker.otherTenantAt))
  if leaseRoom > 0 and concurrency >= 2 and soleTenant and otherTenantAbout then
    local mine = 0
    for _, member in ipairs(redis.call('ZRANGE', leasesKey, 0, -1)) do
      if string.match(member, '^[^~]*~(.*):%d+:%d+$') == soleTenant then
        mine = mine + 1
      end
    end
    leaseRoom = math.min(leaseRoom, math.ceil(concurrency / 2) - mine)
  end
  if leaseRoom <= 0 then
    local soonest = nil
    local holders = redis.call('ZRANGE', leasesKey, 0, -1)
    for _, member in ipairs(holders) do
      local expectedEnd = tonumber(string.match(member, ':(%d+)$'))
      if expectedEnd and (soonest == nil or expectedEnd < soonest) then
        soonest = expectedEnd
      end
    end
    local delay = shortestMs
    if soonest and soonest > now then
      delay = soonest - now
    elseif soonest then
      delay = math.max(math.ceil(callMs / 4), 1)
    end
    for i = 1, itemCount do
      if scoped[i] then
        result[2 * i - 1], result[2 * i] = scoped[i][1], scoped[i][2]
      else
        result[2 * i - 1] = (probeRoom == 0) and BREAKER_PROBING or HANDLER_CONCURRENCY
        result[2 * i] = (probeRoom == 0) and shortestMs or delay
      end
    end
    if probeRoom ~= 0 then
      -- The caller may wait for a lease's ring: from now, leases given back ring the doorbell. A
      -- ring still in it names a lease someone took since (a blocked waiter is served at the push).
      redis.call('DEL', freedKey)
      redis.call('SET', waitersKey, concurrency, 'PX', delay + shortestMs)
    end
    if limited and anyUrgent then
      local markers = {}
      for i = 1, itemCount do
        if urgent[i] then
          markers[#markers + 1] = now + result[2 * i] + URGENT_RETURN_GRACE
          markers[#markers + 1] = ids[i]
        end
      end
      callSliced('ZADD', urgentKey, markers, 1, #markers, 2)
      redis.call('PEXPIRE', urgentKey, leaseTtl)
    end
    result[2 * itemCount + 1] = 0
    result[2 * itemCount + 2] = (state == 'half_open') and 1 or 0
    result[2 * itemCount + 3] = 0
    return result
  end
end

local inWindow = 0
if ratePerMinute > 0 then
  redis.call('ZREMRANGEBYSCORE', rateKey, '-inf', now - MINUTE)
  inWindow = redis.call('ZCARD', rateKey)
end

local newRates, newProbes, markers = {}, {}, {}
local rateDeferred, admitted = 0, 0

-- Rate entries of this call are written before a deferral reads the window's order.
local function writeRates()
  if #newRates > 0 then
    callSliced('ZADD', rateKey, newRates, 1, #newRates, 2)
    newRates = {}
  end
end

for i = 1, itemCount do
  local itemId = ids[i]
  local code, delay = ADMITTED, 0
  local rateLimit = ratePerMinute
  if not urgent[i] and ratePerMinute > 0 and inWindow >= nonUrgentLimit(ratePerMinute) and shareReserved() then
    rateLimit = nonUrgentLimit(ratePerMinute)
  end
  if scoped[i] then
    code, delay = scoped[i][1], scoped[i][2]
  elseif probeRoom == 0 then
    code, delay = BREAKER_PROBING, shortestMs
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
    admitted = admitted + 1
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
  if code == ADMITTED and probeCandidate[tenantOf[i]] == i then
    -- The tenant's probe: its call decides the tenant's half-open scope; out until the caller's time ends.
    local scope = parseScope(redis.call('HGET', scopesKey, 's:' .. tenantOf[i]))
    scope.probe, scope.probeUntil = itemId, now + math.max(urgentHoldMs, 1)
    writeScope(scopesKey, tenantOf[i], scope)
  elseif probeCandidate[tenantOf[i]] == i then
    probeCandidate[tenantOf[i]] = nil
  end
  if limited and urgent[i] then
    markers[#markers + 1] = (code == ADMITTED) and (now + urgentHoldMs) or (now + delay + URGENT_RETURN_GRACE)
    markers[#markers + 1] = itemId
  end
  result[2 * i - 1] = code
  result[2 * i] = delay
end

-- Leases for the calls the admitted items need, as many as are free: the rest of the calls
-- queue behind them in the caller's lanes. Each records when its lane expects to be done: lane n
-- of k makes every k-th call from its n-th.
local granted, expectedEnds = 0, {}
if concurrency > 0 and admitted > 0 then
  local calls = math.ceil(admitted / itemsPerCall)
  granted = math.min(calls, leaseRoom)
  local leases = {}
  for n = 1, granted do
    expectedEnds[n] = now + callMs * (math.floor((calls - n) / granted) + 1)
    leases[#leases + 1] = now + leaseTtl
    leases[#leases + 1] = tokenPrefix .. ':' .. n .. ':' .. expectedEnds[n]
  end
  callSliced('ZADD', leasesKey, leases, 1, #leases, 2)
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
if #markers > 0 then
  callSliced('ZADD', urgentKey, markers, 1, #markers, 2)
  redis.call('PEXPIRE', urgentKey, leaseTtl)
end
result[2 * itemCount + 1] = (state == 'closed' and breaker.failures == 0 and #markers == 0 and not tenantsNotClean) and 1 or 0
result[2 * itemCount + 2] = (state == 'half_open') and 1 or 0
result[2 * itemCount + 3] = granted
for n = 1, granted do
  result[2 * itemCount + 3 + n] = expectedEnds[n]
end
return result
