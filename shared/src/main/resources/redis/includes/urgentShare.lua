--- @include "allButAQuarter"

-- Priority inside a handler, work-conserving: items less urgent than the caller's urgent priority
-- may fill only all but a quarter of the handler's concurrency and rate (allButAQuarter), and only
-- while urgent items of the handler wait or run (the urgent key: itemId -> until when).

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
