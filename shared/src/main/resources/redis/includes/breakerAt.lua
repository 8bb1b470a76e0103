-- An integration's breaker hash, read once: state, openedAt, halfOpenAt, failures, successes; and
-- what its tenant scopes need (see includes/tenantScopes): tenants (1 while the integration's
-- tenant-scope hash holds anything), failTenant (the one tenant whose failures make up the
-- current run, or '*' for several), lastTenant and lastTenantAt (a tenant admission saw, and
-- when), otherTenantAt (when admission last saw a tenant other than lastTenant); times written
-- at most every 10 s; adaptiveUntil and waitingUntil: until when a handler of the integration may
-- hold adaptive state or tenants waiting for a lease (includes/flowState), so admission reads them
-- only then. An absent hash (or field) reads as
-- closed with no failure and no success.
local function readBreaker(breakerKey)
  local fields = redis.call('HMGET', breakerKey, 'state', 'openedAt', 'halfOpenAt', 'failures', 'successes',
    'tenants', 'failTenant', 'lastTenant', 'otherTenantAt', 'lastTenantAt', 'adaptiveUntil', 'waitingUntil')
  return {
    state = fields[1] or 'closed',
    openedAt = tonumber(fields[2]),
    halfOpenAt = tonumber(fields[3]),
    failures = tonumber(fields[4]) or 0,
    successes = tonumber(fields[5]) or 0,
    tenants = fields[6] == '1',
    failTenant = fields[7] or false,
    lastTenant = fields[8] or false,
    otherTenantAt = tonumber(fields[9]),
    lastTenantAt = tonumber(fields[10]),
    adaptiveUntil = tonumber(fields[11]) or 0,
    waitingUntil = tonumber(fields[12]) or 0,
  }
end

-- The breaker's state fields, cleared: closed with no failure (the tenant fields stay).
local function clearBreakerState(breakerKey)
  redis.call('HDEL', breakerKey, 'state', 'openedAt', 'halfOpenAt', 'failures', 'successes', 'failTenant')
end

-- When a breaker (or a tenant's scope of it) opened at openedAt goes half-open: the one place
-- the open -> half-open rule is written.
local function halfOpenAtOf(openedAt, openMs)
  return openedAt + openMs
end

-- The breaker's state as of now, and when it goes (or went) half-open. An open breaker whose
-- open duration has passed is half-open, whether or not a script has written that yet.
local function breakerStateAt(breaker, now, openMs)
  if breaker.state == 'open' then
    local halfOpenAt = halfOpenAtOf(breaker.openedAt, openMs)
    if now < halfOpenAt then
      return 'open', halfOpenAt
    end
    return 'half_open', halfOpenAt
  end
  return breaker.state, breaker.halfOpenAt
end
