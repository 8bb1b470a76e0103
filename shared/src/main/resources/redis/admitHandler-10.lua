--[[
  Admit the items of one (integration, handler) group: pause flag, the integration's breaker and
  its tenant scopes, the handler's adaptive scopes, concurrency (calls in flight, shared fairly
  between tenants by weight) and rate (items per minute). An item passes every check or takes
  nothing: a deferred item holds no rate entry, no probe, no lease.
  * Breaker (includes/breakerGate): open, every item waits until half-open; a tenant's open scope
    holds its items until then, half-open one of them goes as its probe (out until ARGV[12] at
    most), the others wait as probing; half-open, only ARGV[3] probes at once.
  * Adaptive limits (includes/flowState): a scope (the handler's, or a tenant's of it) the partner
    asked to wait holds its items until its Retry-After has passed; a scope cut by AIMD (see
    adaptLimits) has effective limits below the configured ones, which bind instead.
  * Concurrency, counted in calls: the caller gets k leases and runs the admitted items through k
    lanes, one call after another. With no lease free every item waits for the one expected back
    first (each lease records when its lane expects to be done); a holder already late is asked
    again after a quarter of a call. While several tenants compete, each gets its weighted share
    (includes/fairShare); then each lease is one tenant's, and a tenant's items run on its leases only.
  * Rate: a one-minute sliding log, one entry per admission; deferred items of one call queue
    behind each other.
  * Priority (includes/urgentShare): items above the urgent priority fill at most three quarters
    of concurrency and rate while urgent items of this handler wait or run.
  Input:
    KEYS[1] breaker   hash: state, failures, successes, openedAt, halfOpenAt, the tenants seen
                      (includes/breakerAt)
    KEYS[2] probes    sorted set itemId -> probe expiry (ms), half-open only
    KEYS[3] paused    string, present = handler paused
    KEYS[4] leases    sorted set lease member (includes/leaseTokens) -> lease expiry (ms)
    KEYS[5] rate      sorted set itemId:admittedAt -> admission time (ms), the last minute
    KEYS[6] urgent    sorted set itemId -> until when (ms) an urgent item waits or runs
    KEYS[7] waiters   string, present while a worker waits for a lease: the concurrency limit
                      (a lease given back then rings the doorbell, includes/ringFreed)
    KEYS[8] freed     list, the doorbell: emptied when no lease is free (any ring in it is stale)
    KEYS[9] scopes    hash, the integration's tenant scopes of the breaker (includes/tenantScopes)
    KEYS[10] flow     hash, the handler's adaptive scopes and the tenants waiting for a lease
                      (includes/flowState)
    ARGV[1] now (ms)
    ARGV[2] breaker open duration (ms)
    ARGV[3] probes allowed in flight while half-open
    ARGV[4] concurrency limit in calls, 0 = unlimited
    ARGV[5] rate limit in items per minute, 0 = unlimited
    ARGV[6] lease ttl (ms): a lease or probe whose holder never reports frees after it
    ARGV[7] shortest deferral (ms)
    ARGV[8] urgent priority: items at or below it may use the whole limit
    ARGV[9] items per call (1, or the handler's batch size)
    ARGV[10] this admission's name, unique: its leases' members start with it
    ARGV[11] expected duration of one call (ms), the caller's estimate
    ARGV[12] how long an admitted urgent item may run (ms): the caller's time left
    ARGV[13..] quadruples: itemId, priority, tenantId, the tenant's weight
  Output:
    two entries per item, in input order: code, delay (ms); the codes (AdmitCode on the Java side)
      0 admitted, 1 paused, 2 breaker open, 3 breaker probing, 4 handler rate,
      5 handler concurrency, 6 adaptive stop (a Retry-After), 7 adaptive limit (AIMD's, below the configured one)
    then 1 if nothing needs a report of successes (the breaker closed with no failure counted, no
    tenant scope counting, no adaptive scope, no urgent marker), else 0;
    then 1 if the breaker is half-open, else 0 (an open breaker shows in the codes);
    then 1 if an adaptive scope of the handler or of these items' tenants holds state, else 0;
    then 1 if tenants compete: each lease is one tenant's, whose items run on its own leases only, else 0;
    then k, the leases granted (0 when concurrency is unlimited), and the k lease members, lane 1 first
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
local flowKey = KEYS[10]

local now = tonumber(ARGV[1])
local openMs = tonumber(ARGV[2])
local maxProbes = tonumber(ARGV[3])
local concurrency = tonumber(ARGV[4])
local ratePerMinute = tonumber(ARGV[5])
local leaseTtl = tonumber(ARGV[6])
local shortestMs = tonumber(ARGV[7])
local urgentPriority = tonumber(ARGV[8])
local itemsPerCall = tonumber(ARGV[9])
local admission = ARGV[10]
local callMs = tonumber(ARGV[11])
local urgentHoldMs = tonumber(ARGV[12])
local FIRST_ITEM = 13

local ADMITTED, PAUSED, BREAKER_OPEN, BREAKER_PROBING, HANDLER_RATE, HANDLER_CONCURRENCY, ADAPTIVE_STOP, ADAPTIVE_LIMIT = 0, 1, 2, 3, 4, 5, 6, 7
-- An urgent item deferred keeps the share this long past its return, to be admitted on it.
local URGENT_RETURN_GRACE = 5000
-- A tenant left waiting for a lease counts as competing this long past its return (served or
-- not: its next items are on their way), so a tenant between two batches keeps its claim.
local WAITING_GRACE = 3000

--- @include "includes/advanceBreaker"
--- @include "includes/sliced"
--- @include "includes/tenantScopes"
--- @include "includes/breakerGate"
--- @include "includes/flowState"
--- @include "includes/leaseTokens"
--- @include "includes/fairShare"
--- @include "includes/urgentShare"
--- @include "includes/rateLog"

local itemCount = (#ARGV - FIRST_ITEM + 1) / 4
local result = {}

local function finish(clean, halfOpen, adapted, members, tenantLanes)
  result[2 * itemCount + 1] = clean and 1 or 0
  result[2 * itemCount + 2] = halfOpen and 1 or 0
  result[2 * itemCount + 3] = adapted and 1 or 0
  result[2 * itemCount + 4] = tenantLanes and 1 or 0
  result[2 * itemCount + 5] = #members
  for n, member in ipairs(members) do
    result[2 * itemCount + 5 + n] = member
  end
  return result
end

local function decideAll(code, delay, adapted)
  for i = 1, itemCount do
    result[2 * i - 1] = code
    result[2 * i] = delay
  end
  return finish(false, false, adapted, {})
end

if redis.call('EXISTS', pausedKey) == 1 then
  return decideAll(PAUSED, 0)
end

local breaker = advanceBreaker(breakerKey, probesKey, now, openMs)
local state = breaker.state
if state == 'open' then
  return decideAll(BREAKER_OPEN, breaker.halfOpenAt - now)
end

local ids, urgent, tenantOf, weightOf, weightByTenant = {}, {}, {}, {}, {}
local anyUrgent = false
for i = 1, itemCount do
  local at = FIRST_ITEM + 4 * (i - 1)
  ids[i] = ARGV[at]
  urgent[i] = tonumber(ARGV[at + 1]) <= urgentPriority
  tenantOf[i] = ARGV[at + 2]
  weightOf[i] = tonumber(ARGV[at + 3])
  weightByTenant[tenantOf[i]] = weightOf[i]
  anyUrgent = anyUrgent or urgent[i]
end

noteTenantsSeen(breakerKey, breaker, tenantOf, now)
local held, probeCandidate, tenantsNotClean = tenantScopeHolds(scopesKey, breaker, tenantOf, now, openMs, shortestMs,
  BREAKER_OPEN, BREAKER_PROBING)

-- The adaptive scopes and the tenants waiting for a lease, read only when there may be any.
local flow = { scopes = {}, waiting = {} }
if breaker.adaptiveUntil > now or (concurrency > 0 and breaker.waitingUntil > now) then
  flow = readFlow(flowKey, now)
end
local handlerScope = flow.scopes['h']
if handlerScope and handlerScope.stopUntil > now then
  return decideAll(ADAPTIVE_STOP, handlerScope.stopUntil - now, true)
end
local adapted = handlerScope ~= nil
local capOf = {}
for i = 1, itemCount do
  local scope = flow.scopes['t:' .. tenantOf[i]]
  if scope then
    adapted = true
    if scope.stopUntil > now and not held[i] then
      held[i] = { ADAPTIVE_STOP, scope.stopUntil - now }
    end
    if scope.conc > 0 then
      capOf[tenantOf[i]] = math.max(1, math.floor(scope.conc))
    end
  end
end
local function effective(configured, adaptedLimit)
  if configured > 0 and adaptedLimit and adaptedLimit > 0 then
    return math.max(1, math.min(configured, math.floor(adaptedLimit)))
  end
  return configured
end
local effConc = effective(concurrency, handlerScope and handlerScope.conc)
local effRate = effective(ratePerMinute, handlerScope and handlerScope.rate)
local limited = concurrency > 0 or ratePerMinute > 0

local passing, passingCount = {}, 0
for i = 1, itemCount do
  passing[i] = not held[i]
  passingCount = passingCount + (passing[i] and 1 or 0)
end

local urgentMemo = {}
local probeRoom = -1
if state == 'half_open' then
  redis.call('ZREMRANGEBYSCORE', probesKey, '-inf', now)
  probeRoom = maxProbes - redis.call('ZCARD', probesKey)
end

local function markWaiting(tenants, delay)
  local untilAt = math.ceil(now + delay + WAITING_GRACE)
  for tenant in pairs(tenants) do
    redis.call('HSET', flowKey, 'w:' .. tenant, (weightByTenant[tenant] or 1) .. '|' .. untilAt)
  end
  redis.call('PEXPIRE', flowKey, leaseTtl)
  if breaker.waitingUntil < untilAt then
    redis.call('HSET', breakerKey, 'waitingUntil', untilAt)
    breaker.waitingUntil = untilAt
  end
end

local function markUrgent(markers, i, untilAt)
  if limited and urgent[i] then
    markers[#markers + 1] = untilAt
    markers[#markers + 1] = ids[i]
  end
end

-- Concurrency first, in calls: with no lease free for even one call every item waits for the
-- lease expected back first, and nothing else is taken.
local placed, free, usage, contended, leftWaiting, grants = nil, 0, nil, false, nil, nil
if concurrency > 0 then
  redis.call('ZREMRANGEBYSCORE', leasesKey, '-inf', now)
  local leasesHeld = redis.call('ZCARD', leasesKey)
  -- Who holds the leases, read only when it matters: no lease free, or tenants may compete.
  if leasesHeld > 0 and (leasesHeld >= effConc or next(flow.waiting) ~= nil or next(capOf) ~= nil) then
    usage = leaseUsage(redis.call('ZRANGE', leasesKey, 0, -1))
  else
    usage = leaseUsage({})
  end
  local callsWanted = math.ceil(passingCount / itemsPerCall)
  local limit, configuredLimit = effConc, concurrency
  if not anyUrgent and leasesHeld + callsWanted > allButAQuarter(effConc) and urgentShareHeld(urgentKey, now, anyUrgent, urgentMemo) then
    limit, configuredLimit = allButAQuarter(effConc), allButAQuarter(concurrency)
  end
  free = limit - leasesHeld
  if free <= 0 then
    local delay = shortestMs
    if usage.soonest and usage.soonest > now then
      delay = usage.soonest - now
    elseif usage.soonest then
      delay = math.max(math.ceil(callMs / 4), 1)
    end
    local code = (leasesHeld < configuredLimit) and ADAPTIVE_LIMIT or HANDLER_CONCURRENCY
    local markers, waiting = {}, {}
    for i = 1, itemCount do
      if held[i] then
        result[2 * i - 1], result[2 * i] = held[i][1], held[i][2]
      else
        result[2 * i - 1] = (probeRoom == 0) and BREAKER_PROBING or code
        result[2 * i] = (probeRoom == 0) and shortestMs or delay
        waiting[tenantOf[i]] = true
      end
      markUrgent(markers, i, now + result[2 * i] + URGENT_RETURN_GRACE)
    end
    if probeRoom ~= 0 then
      -- The caller may wait for a lease's ring: from now, leases given back ring the doorbell. A
      -- ring still in it names a lease someone took since (a blocked waiter is served at the push).
      redis.call('DEL', freedKey)
      redis.call('SET', waitersKey, concurrency, 'PX', delay + shortestMs)
      markWaiting(waiting, delay)
    end
    if #markers > 0 then
      callSliced('ZADD', urgentKey, markers, 1, #markers, 2)
      redis.call('PEXPIRE', urgentKey, leaseTtl)
    end
    return finish(false, state == 'half_open', adapted, {})
  end
  -- Tenants compete when one is left waiting for a lease, and there are no more of them than
  -- leases (or a tenant's adaptive limit binds): then each takes only its share, one call per
  -- lease. Otherwise every item passes, and the calls beyond the free leases run through the
  -- lanes one after another; with more tenants than leases, a share would be under one lease,
  -- and the tenants take turns as the queue serves them (SQS fair queues: by tenant).
  local competing, competitors = {}, 0
  local function compete(tenant)
    if not competing[tenant] then
      competing[tenant] = true
      competitors = competitors + 1
    end
  end
  for tenant in pairs(flow.waiting) do
    compete(tenant)
  end
  if competitors > 0 then
    for tenant in pairs(usage.count) do
      compete(tenant)
    end
    for i = 1, itemCount do
      if passing[i] then
        compete(tenantOf[i])
      end
    end
  end
  contended = (competitors >= 2 and competitors <= limit) or next(capOf) ~= nil
  if contended then
    grants, leftWaiting = allocateLeases(tenantOf, weightOf, passing, itemsPerCall, free, limit, usage, flow.waiting, capOf)
    placed = {}
    for i = 1, itemCount do
      placed[i] = passing[i] and grants[tenantOf[i]] ~= nil
    end
    local delay = usage.soonest and math.max(usage.soonest - now, math.ceil(callMs / 4), 1) or shortestMs
    if next(leftWaiting) then
      markWaiting(leftWaiting, delay)
    end
  elseif callsWanted > free and competitors <= limit then
    -- More calls than free leases: they queue in this admission's lanes, and its tenants want
    -- more; marked, so that another tenant's next admission sees them compete.
    local queued = {}
    for i = 1, itemCount do
      if passing[i] then
        queued[tenantOf[i]] = true
      end
    end
    markWaiting(queued, math.ceil((callsWanted - free) / math.max(free, 1)) * callMs)
  end
end

local inWindow = 0
if ratePerMinute > 0 then
  inWindow = rateLogNow(rateKey, now)
end

local newRates, newProbes, markers, admittedItems, unplacedOf = {}, {}, {}, {}, {}
local rateDeferred = 0

-- Rate entries of this call are written before a deferral reads the window's order.
local function writeRates()
  if #newRates > 0 then
    callSliced('ZADD', rateKey, newRates, 1, #newRates, 2)
    newRates = {}
  end
end

-- The delay of an item left without a call: when a lease of its tenant (or any) is expected back.
local function leaseDelay(tenant)
  local soonest = usage and (usage.soonestOf[tenant] or usage.soonest)
  if soonest and soonest > now then
    return soonest - now
  end
  return soonest and math.max(math.ceil(callMs / 4), 1) or shortestMs
end

for i = 1, itemCount do
  local itemId = ids[i]
  local code, delay = ADMITTED, 0
  local rateLimit, configuredRate = effRate, ratePerMinute
  if not urgent[i] and ratePerMinute > 0 and inWindow >= allButAQuarter(effRate)
      and urgentShareHeld(urgentKey, now, anyUrgent, urgentMemo) then
    rateLimit, configuredRate = allButAQuarter(effRate), allButAQuarter(ratePerMinute)
  end
  if held[i] then
    code, delay = held[i][1], held[i][2]
  elseif probeRoom == 0 then
    code, delay = BREAKER_PROBING, shortestMs
  elseif placed and not placed[i] then
    -- A tenant granted no lease: its items come back one call apart on the leases it holds, as
    -- its share will serve them, rather than all at its first lease back.
    local tenant = tenantOf[i]
    local capped = capOf[tenant] ~= nil and (usage.count[tenant] or 0) >= capOf[tenant]
    local queued = unplacedOf[tenant] or 0
    unplacedOf[tenant] = queued + 1
    local spacing = math.ceil(callMs / math.max(1, usage.count[tenant] or 0))
    code, delay = capped and ADAPTIVE_LIMIT or HANDLER_CONCURRENCY, leaseDelay(tenant) + math.floor(queued / itemsPerCall) * spacing
  elseif ratePerMinute > 0 and inWindow >= rateLimit then
    writeRates()
    code = (inWindow < configuredRate) and ADAPTIVE_LIMIT or HANDLER_RATE
    delay = rateWait(rateKey, now, inWindow, rateLimit, rateDeferred)
    rateDeferred = rateDeferred + 1
  else
    admittedItems[#admittedItems + 1] = i
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
  markUrgent(markers, i, (code == ADMITTED) and (now + urgentHoldMs) or (now + delay + URGENT_RETURN_GRACE))
  result[2 * i - 1] = code
  result[2 * i] = delay
end

-- Leases for the admitted items' calls (never more calls than leases while tenants compete).
local members = {}
if concurrency > 0 and #admittedItems > 0 then
  local tenantsInOrder = {}
  for k, i in ipairs(admittedItems) do
    tenantsInOrder[k] = tenantOf[i]
  end
  if contended then
    local itemsOf = {}
    for _, tenant in ipairs(tenantsInOrder) do
      itemsOf[tenant] = (itemsOf[tenant] or 0) + 1
    end
    members = grantTenantLeases(leasesKey, admission, itemsOf, grants, weightByTenant, itemsPerCall, callMs, now, leaseTtl)
  else
    members = grantLeases(leasesKey, admission, tenantsInOrder, weightByTenant, itemsPerCall, free, callMs, now, leaseTtl)
  end
end
if ratePerMinute > 0 and inWindow > 0 then
  writeRates()
  redis.call('PEXPIRE', rateKey, RATE_WINDOW_MS)
end
if #newProbes > 0 then
  callSliced('ZADD', probesKey, newProbes, 1, #newProbes, 2)
  redis.call('PEXPIRE', probesKey, leaseTtl)
end
if #markers > 0 then
  callSliced('ZADD', urgentKey, markers, 1, #markers, 2)
  redis.call('PEXPIRE', urgentKey, leaseTtl)
end
local clean = state == 'closed' and breaker.failures == 0 and #markers == 0 and not tenantsNotClean and not adapted
return finish(clean, state == 'half_open', adapted, members, contended)
