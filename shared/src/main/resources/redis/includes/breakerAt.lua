-- An integration's breaker hash, read once: state, openedAt, halfOpenAt, failures, successes.
-- An absent hash (or field) reads as closed with no failure and no success.
local function readBreaker(breakerKey)
  local fields = redis.call('HMGET', breakerKey, 'state', 'openedAt', 'halfOpenAt', 'failures', 'successes')
  return {
    state = fields[1] or 'closed',
    openedAt = tonumber(fields[2]),
    halfOpenAt = tonumber(fields[3]),
    failures = tonumber(fields[4]) or 0,
    successes = tonumber(fields[5]) or 0,
  }
end

-- The breaker's state as of now, and when it goes (or went) half-open: the one place the
-- open -> half-open rule is written. An open breaker whose open duration has passed is
-- half-open, whether or not a script has written that yet.
local function breakerStateAt(breaker, now, openMs)
  if breaker.state == 'open' then
    local halfOpenAt = breaker.openedAt + openMs
    if now < halfOpenAt then
      return 'open', halfOpenAt
    end
    return 'half_open', halfOpenAt
  end
  return breaker.state, breaker.halfOpenAt
end
