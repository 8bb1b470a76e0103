-- Weighted fair shares of a handler's concurrency between tenants (a tenant integration's weight).
-- Work-conserving: while no other tenant competes, a tenant takes any free lease. While others do
-- (waiting for a lease, or holding some), each tenant's calls in flight stop at its share of the
-- limit, limit x weight / the competing tenants' weights (rounded, at least 1), unless no competing
-- tenant with items to call is below its own share; a tenant's adaptive limit (AIMD) caps it too.
-- A lease counts for every tenant whose items its lane carries (a mixed batch for each of them).
-- Needs includes/leaseTokens.

-- What the leases held tell: calls in flight per tenant, their weights, and when each tenant's
-- first lease (and the first of all) is expected back.
local function leaseUsage(members)
  local usage = { count = {}, weight = {}, soonestOf = {}, soonest = nil }
  for _, member in ipairs(members) do
    local lease = parseLease(member)
    if lease.expectedEnd and (usage.soonest == nil or lease.expectedEnd < usage.soonest) then
      usage.soonest = lease.expectedEnd
    end
    for _, tenant in ipairs(lease.tenants) do
      usage.count[tenant.id] = (usage.count[tenant.id] or 0) + 1
      usage.weight[tenant.id] = tenant.weight
      if lease.expectedEnd and (usage.soonestOf[tenant.id] == nil or lease.expectedEnd < usage.soonestOf[tenant.id]) then
        usage.soonestOf[tenant.id] = lease.expectedEnd
      end
    end
  end
  return usage
end

-- Which of the passing items get a place in a call, in order: placed[i] = true, or false with the
-- tenant left waiting. `free` leases at most are taken, one per call of `perCall` items; capOf
-- holds the tenants' adaptive limits. Returns placed, and the tenants left waiting.
local function allocateCalls(tenantOf, weightOf, passing, perCall, free, limit, usage, waiting, capOf)
  local competing, totalWeight, left = {}, 0, {}
  local function compete(tenant, weight)
    if not competing[tenant] then
      competing[tenant] = weight
      totalWeight = totalWeight + weight
    end
  end
  for tenant, weight in pairs(usage.weight) do
    compete(tenant, weight)
  end
  for tenant, mark in pairs(waiting) do
    compete(tenant, mark.weight)
  end
  for i = 1, #tenantOf do
    if passing[i] then
      compete(tenantOf[i], weightOf[i])
      left[tenantOf[i]] = (left[tenantOf[i]] or 0) + 1
    end
  end
  local used = {}
  for tenant in pairs(competing) do
    used[tenant] = usage.count[tenant] or 0
  end
  local function underShare(tenant)
    local share = math.max(1, math.floor(limit * competing[tenant] / totalWeight + 0.5))
    return used[tenant] < share and (capOf[tenant] == nil or used[tenant] < capOf[tenant])
  end
  local function anotherUnderShare(tenant)
    for other in pairs(competing) do
      if other ~= tenant and (waiting[other] or (left[other] or 0) > 0) and underShare(other) then
        return true
      end
    end
    return false
  end
  local placed, leftWaiting = {}, {}
  local calls, inCall, callTenants = 0, 0, {}
  for i = 1, #tenantOf do
    if passing[i] then
      local tenant = tenantOf[i]
      left[tenant] = left[tenant] - 1
      local open = inCall > 0 and inCall < perCall
      local ok = open and callTenants[tenant]
      if not ok then
        local capped = capOf[tenant] ~= nil and used[tenant] >= capOf[tenant]
        ok = (open or calls < free) and not capped and (underShare(tenant) or not anotherUnderShare(tenant))
        if ok then
          if not open then
            calls, inCall, callTenants = calls + 1, 0, {}
          end
          callTenants[tenant] = true
          used[tenant] = used[tenant] + 1
        end
      end
      if ok then
        inCall = inCall + 1
        placed[i] = true
      else
        placed[i] = false
        leftWaiting[tenant] = true
      end
    end
  end
  return placed, leftWaiting
end
