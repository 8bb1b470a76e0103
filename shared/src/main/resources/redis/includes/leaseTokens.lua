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
