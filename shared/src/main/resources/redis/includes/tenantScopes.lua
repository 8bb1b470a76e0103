-- A tenant's scope of an integration's breaker, kept in one hash per integration (so every key
-- stays on the integration's slot): field 'f:<tenant>' the tenant's consecutive failures while
-- its scope is closed, field 's:<tenant>' its open scope as "openedAt|successes|probeItem|probeUntil"
-- (probeItem empty when no probe is out). Absent = closed with no failure. The breaker hash's
-- 'tenants' field is 1 while this hash holds anything, so admission reads it only then.
local function parseScope(value)
  if not value then
    return nil
  end
  local openedAt, successes, probe, probeUntil = string.match(value, '^(%d+)|(%d+)|([^|]*)|(%d+)$')
  return { openedAt = tonumber(openedAt), successes = tonumber(successes), probe = probe, probeUntil = tonumber(probeUntil) }
end

local function writeScope(scopesKey, tenant, scope)
  redis.call('HSET', scopesKey, 's:' .. tenant,
    scope.openedAt .. '|' .. scope.successes .. '|' .. scope.probe .. '|' .. scope.probeUntil)
end

-- After removing fields: the breaker's 'tenants' flag follows whether anything is left.
local function settleTenantsFlag(breakerKey, scopesKey)
  if redis.call('HLEN', scopesKey) == 0 then
    redis.call('HDEL', breakerKey, 'tenants')
  end
end
