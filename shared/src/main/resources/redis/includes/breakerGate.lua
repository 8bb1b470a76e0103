-- The breaker's part of a handler admission: which tenants admission sees (for the tenant scopes'
-- opening rule: see recordOutcome), and the tenant scopes that hold their items back
-- (includes/tenantScopes). Needs includes/breakerAt and includes/tenantScopes.

-- How often admission rewrites that it sees a second tenant of the integration.
local OTHER_TENANT_REFRESH = 10000

-- Notes the tenants of this admission on the breaker hash: lastTenant, lastTenantAt, and
-- otherTenantAt when one differs from the last seen (written at most every 10 s).
local function noteTenantsSeen(breakerKey, breaker, tenantOf, now)
  local seenOther = false
  for i = 1, #tenantOf do
    if tenantOf[i] ~= (breaker.lastTenant or tenantOf[1]) then
      seenOther = tenantOf[i]
    end
  end
  if seenOther and (breaker.otherTenantAt == nil or now - breaker.otherTenantAt >= OTHER_TENANT_REFRESH) then
    redis.call('HSET', breakerKey, 'lastTenant', seenOther, 'otherTenantAt', now, 'lastTenantAt', now)
  elseif breaker.lastTenantAt == nil or now - breaker.lastTenantAt >= OTHER_TENANT_REFRESH then
    redis.call('HSET', breakerKey, 'lastTenant', tenantOf[1], 'lastTenantAt', now)
  end
end

-- Items held back by their tenant's open or probing scope: held[i] = { code, delay }; per tenant
-- the index of its probe candidate (a half-open scope with no probe out admits one item as its
-- probe); whether any of these tenants has a scope with something counted (then a report matters).
local function tenantScopeHolds(scopesKey, breaker, tenantOf, now, openMs, shortestMs, openCode, probingCode)
  local held, probeCandidate, notClean = {}, {}, false
  if not breaker.tenants then
    return held, probeCandidate, notClean
  end
  local distinct, fields, seen = {}, {}, {}
  for i = 1, #tenantOf do
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
    notClean = notClean or values[2 * k - 1] ~= false or values[2 * k] ~= false
    scopeOf[tenant] = parseScope(values[2 * k - 1])
  end
  for i = 1, #tenantOf do
    local scope = scopeOf[tenantOf[i]]
    if scope then
      local halfOpenAt = halfOpenAtOf(scope.openedAt, openMs)
      if now < halfOpenAt then
        held[i] = { openCode, halfOpenAt - now }
      elseif (scope.probe == '' or scope.probeUntil <= now) and probeCandidate[tenantOf[i]] == nil then
        probeCandidate[tenantOf[i]] = i
      else
        held[i] = { probingCode, shortestMs }
      end
    end
  end
  return held, probeCandidate, notClean
end
