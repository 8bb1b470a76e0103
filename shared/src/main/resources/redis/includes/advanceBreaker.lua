--- @include "breakerAt"

-- The breaker as of now (readBreaker's fields, with halfOpenAt: when an open breaker goes
-- half-open, or when a half-open one did), after writing the open -> half-open transition if it
-- is due, so that admission and report act on the same state. A half-open period starts with no
-- success and no probe.
local function advanceBreaker(breakerKey, probesKey, now, openMs)
  local breaker = readBreaker(breakerKey)
  local state, halfOpenAt = breakerStateAt(breaker, now, openMs)
  if breaker.state == 'open' and state == 'half_open' then
    redis.call('HSET', breakerKey, 'state', 'half_open', 'halfOpenAt', halfOpenAt, 'successes', 0)
    redis.call('DEL', probesKey)
    breaker.state, breaker.successes = state, 0
  end
  breaker.halfOpenAt = halfOpenAt
  return breaker
end
