-- Priority inside a handler, work-conserving: items less urgent than the caller's urgent priority
-- may fill only limit - ceil(limit / 4) of the handler's concurrency and rate (limits of at least
-- 2), and only while urgent items of the handler wait or run (the urgent key: itemId -> until when).
local function nonUrgentLimit(limit)
  if limit < 2 then
    return limit
  end
  return limit - math.ceil(limit / 4)
end

-- Whether the share kept for urgent items holds now: urgent items in this call, or any waiting or
-- running (the set read at most once per script: `memo` holds the answer).
local function urgentShareHeld(urgentKey, now, anyUrgent, memo)
  if memo.held == nil then
    if anyUrgent then
      memo.held = true
    else
      redis.call('ZREMRANGEBYSCORE', urgentKey, '-inf', now)
      memo.held = redis.call('ZCARD', urgentKey) > 0
    end
  end
  return memo.held
end
