-- A handler's leases (the leases key: member -> expiry), one per call slot. A member is
-- "<admission>~<tenant>*<weight>,<tenant>*<weight>…:<lane>:<expectedEndMs>": the tenants whose
-- items its lane's calls carry (a fair share counts the lease for each of them) and when its lane
-- expects to be done.
local function parseLease(member)
  local tenants, expectedEnd = string.match(member, '^[^~]*~([^:]*):%d+:(%d+)$')
  local lease = { tenants = {}, expectedEnd = tonumber(expectedEnd or string.match(member, ':(%d+)$')) }
  for entry in string.gmatch(tenants or '', '[^,]+') do
    local tenant, weight = string.match(entry, '^([^*]+)%*?(%d*)$')
    lease.tenants[#lease.tenants + 1] = { id = tenant, weight = tonumber(weight) or 1 }
  end
  return lease
end

local function leaseMember(admission, tenants, weightOf, lane, expectedEnd)
  local listed = {}
  for _, tenant in ipairs(tenants) do
    listed[#listed + 1] = tenant .. '*' .. (weightOf[tenant] or 1)
  end
  return admission .. '~' .. table.concat(listed, ',') .. ':' .. lane .. ':' .. expectedEnd
end

-- Leases for the calls of the admitted items (their tenants in call order), as many as are free:
-- the rest of the calls queue behind them in the caller's lanes. Lane n of k makes every k-th call
-- from its n-th; its lease records when it expects to be done and names the tenants of those
-- calls. Returns the members, lane 1 first, and the tenants served. Needs includes/sliced.
local function grantLeases(leasesKey, admission, tenantsInOrder, weightOf, perCall, free, callMs, now, ttl)
  local calls = math.ceil(#tenantsInOrder / perCall)
  local granted = math.min(calls, free)
  local members, leases, served = {}, {}, {}
  for n = 1, granted do
    local tenants, seen = {}, {}
    for call = n, calls, granted do
      for k = (call - 1) * perCall + 1, math.min(call * perCall, #tenantsInOrder) do
        local tenant = tenantsInOrder[k]
        if not seen[tenant] then
          seen[tenant] = true
          tenants[#tenants + 1] = tenant
          served[tenant] = true
        end
      end
    end
    local expectedEnd = now + callMs * (math.floor((calls - n) / granted) + 1)
    members[n] = leaseMember(admission, tenants, weightOf, n, expectedEnd)
    leases[#leases + 1] = now + ttl
    leases[#leases + 1] = members[n]
  end
  if granted > 0 then
    callSliced('ZADD', leasesKey, leases, 1, #leases, 2)
    redis.call('PEXPIRE', leasesKey, ttl)
  end
  return members, served
end

-- Leases while tenants compete: each tenant's admitted items (callsOf[tenant]: their count) on its
-- own granted leases, lane n of k of a tenant making every k-th of its calls from its n-th. Lanes
-- are numbered across the admission from `firstLane`. Returns the members and the tenants served.
local function grantTenantLeases(leasesKey, admission, itemsOf, grants, weightOf, perCall, callMs, now, ttl)
  local members, leases, served, lane = {}, {}, {}, 0
  local tenants = {}
  for tenant in pairs(itemsOf) do
    tenants[#tenants + 1] = tenant
  end
  table.sort(tenants)
  for _, tenant in ipairs(tenants) do
    local calls = math.ceil(itemsOf[tenant] / perCall)
    local granted = math.min(calls, grants[tenant] or 0)
    for n = 1, granted do
      lane = lane + 1
      local expectedEnd = now + callMs * (math.floor((calls - n) / granted) + 1)
      members[#members + 1] = leaseMember(admission, { tenant }, weightOf, lane, expectedEnd)
      leases[#leases + 1] = now + ttl
      leases[#leases + 1] = members[#members]
      served[tenant] = true
    end
  end
  if #leases > 0 then
    callSliced('ZADD', leasesKey, leases, 1, #leases, 2)
    redis.call('PEXPIRE', leasesKey, ttl)
  end
  return members, served
end
