--[[
  An integration's breaker as of now, as the next admission or report will see it: an open
  breaker whose open duration has passed reads half-open with no success yet. Writes nothing
  (that transition is written by the next admission or report).
  Input:
    KEYS[1] breaker   hash: state, failures, successes, openedAt, halfOpenAt (absent = closed)
    ARGV[1] now (ms)
    ARGV[2] breaker open duration (ms)
  Output:
    { state ('closed' | 'open' | 'half_open'), consecutive failures, successes while half-open
      (else 0), openedAt (ms) or nil, halfOpenAt (ms): when an open breaker goes half-open (its
      "open until") or when a half-open one went; nil when closed }
]]
local breakerKey = KEYS[1]

local now = tonumber(ARGV[1])
local openMs = tonumber(ARGV[2])

--- @include "includes/breakerAt"

local breaker = readBreaker(breakerKey)
local state, halfOpenAt = breakerStateAt(breaker, now, openMs)
if state == 'closed' then
  return { state, breaker.failures, 0, breaker.openedAt or false, false }
end
if state == 'open' then
  return { state, breaker.failures, 0, breaker.openedAt or false, halfOpenAt }
end
local successes = (breaker.state == 'half_open') and breaker.successes or 0
return { state, breaker.failures, successes, breaker.openedAt or false, halfOpenAt }
