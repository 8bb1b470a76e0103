-- All of a limit but a quarter of it (rounded up); all of it below 2. What a backlog takes of a tenant's window at
-- once (the rest paced), and what items less urgent than the urgent priority may fill of a handler's limits.
local function allButAQuarter(limit)
  if limit < 2 then
    return limit
  end
  return limit - math.ceil(limit / 4)
end
