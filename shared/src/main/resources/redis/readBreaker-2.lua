--[[
  An integration's breaker as of now, as the next admission or report will see it: an open
  breaker whose open duration has passed reads half-open with no success yet; the same for each
  tenant scope (includes/tenantScopes). Writes nothing (that transition is written by the next
  admission or report).
  Input:
    KEYS[1] breaker   hash: state, failures, successes, openedAt, halfOpenAt (absent = closed)
    KEYS[2] scopes    hash, the integration's tenant scopes
    ARGV[1] now (ms)
    ARGV[2] breaker open duration (ms)
  Output:
    { state ('closed' | 'open' | 'half_open'), consecutive failures, successes while half-open
      (else 0), openedAt (ms) or nil, halfOpenAt (ms): when an open breaker goes half-open (its
      "open until") or when a half-open one went; nil when closed;
      then six values per tenant scope with anything to tell: tenantId, state, consecutive
      failures, successes while half-open, openedAt or nil, halfOpenAt or nil }
]]
local breakerKey = KEYS[1]
local scopesKey = KEYS[2]

local now = tonumber(ARGV[1])
local openMs = tonumber(ARGV[2])

--- @include "includes/breakerAt"
--- @include "includes/tenantScopes"

local breaker = readBreaker(breakerKey)
local state, halfOpenAt = breakerStateAt(breaker, now, openMs)
local reply
if state == 'closed' then
  reply = { state, breaker.failures, 0, breaker.openedAt or false, false }
elseif state == 'open' then
  reply = { state, breaker.failures, 0, breaker.openedAt or false, halfOpenAt }
else
  local successes = (breaker.state == 'half_open') and breaker.successes or 0
  reply = { state, breaker.failures, successes, breaker.openedAt or false, halfOpenAt }
end

if breaker.tenants then
  local fields = redis.call('HGETALL', scopesKey)
  for i = 1, #fields, 2 do
    local kind, tenant = string.match(fields[i], '^(%a):(.*)$')
    if kind == 'f' then
      for _, v in ipairs({ tenant, 'closed', tonumber(fields[i + 1]), 0, false, false }) do
        reply[#reply + 1] = v
      end
    elseif kind == 's' then
      local scope = parseScope(fields[i + 1])
      local at = halfOpenAtOf(scope.openedAt, openMs)
      local scopeState = now < at and 'open' or 'half_open'
      local successes = scopeState == 'half_open' and scope.successes or 0
      for _, v in ipairs({ tenant, scopeState, 0, successes, scope.openedAt, at }) do
        reply[#reply + 1] = v
      end
    end
  end
end
return reply
