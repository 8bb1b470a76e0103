-- Weighted fair shares of a handler's concurrency between tenants (a tenant integration's weight).
-- Work-conserving: while no other tenant competes, a tenant takes any free lease. While others do
-- (waiting for a lease, or holding some; no more tenants than leases, see admitHandler), each tenant's calls in flight stop at its share of the
-- limit, limit x weight / the competing tenants' weights (rounded, at least 1), unless no competing
-- tenant with items to call is below its own share; a tenant's adaptive limit (AIMD) caps it too.
-- A lease counts for every tenant whose items its lane carries (a mixed batch for each of them;
-- while tenants compete, each lease is one tenant's).
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

-- How the free leases go to the group's tenants while they compete, one at a time to the eligible
-- tenant least served for its weight (ties by name). A tenant is eligible while it has calls left
-- to make, its adaptive limit (capOf) is not reached, and it is under its share or no other
-- competing tenant with calls to make is. Each lease is one tenant's: its items queue on its own
-- leases (the caller runs each tenant's calls through its own lanes), so the leases count exactly.
-- Returns per tenant the leases granted, and the tenants left waiting (calls beyond their leases).
local function allocateLeases(tenantOf, weightOf, passing, perCall, free, limit, usage, waiting, capOf)
  local competing, totalWeight, items = {}, 0, {}
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
      items[tenantOf[i]] = (items[tenantOf[i]] or 0) + 1
    end
  end
  local used, grants = {}, {}
  for tenant in pairs(competing) do
    used[tenant] = usage.count[tenant] or 0
  end
  local function callsLeft(tenant)
    return math.ceil((items[tenant] or 0) / perCall) - (grants[tenant] or 0)
  end
  local function underShare(tenant)
    local share = math.max(1, math.floor(limit * competing[tenant] / totalWeight + 0.5))
    return used[tenant] < share and (capOf[tenant] == nil or used[tenant] < capOf[tenant])
  end
  local function anotherUnderShare(tenant)
    for other in pairs(competing) do
      local wants = waiting[other] or callsLeft(other) > 0
      if other ~= tenant and wants and underShare(other) then
        return true
      end
    end
    return false
  end
  for _ = 1, free do
    local best, bestScore = nil, nil
    for tenant in pairs(items) do
      local capped = capOf[tenant] ~= nil and used[tenant] >= capOf[tenant]
      if callsLeft(tenant) > 0 and not capped and (underShare(tenant) or not anotherUnderShare(tenant)) then
        local score = used[tenant] / competing[tenant]
        if best == nil or score < bestScore or (score == bestScore and tenant < best) then
          best, bestScore = tenant, score
        end
      end
    end
    if not best then
      break
    end
    grants[best] = (grants[best] or 0) + 1
    used[best] = used[best] + 1
  end
  -- Left waiting: a tenant with calls still to make beyond its leases (its items queue on the
  -- leases it has, or wait for one), so its claim stands until its next items come.
  local leftWaiting = {}
  for tenant in pairs(items) do
    if callsLeft(tenant) > 0 then
      leftWaiting[tenant] = true
    end
  end
  return grants, leftWaiting
end
