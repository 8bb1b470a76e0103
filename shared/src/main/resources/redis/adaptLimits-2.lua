--[[
  Adapt a handler's limits to what its partner answered (AIMD), per scope: the handler's, or a
  tenant's of the handler when the answers single that tenant out (another tenant of the
  integration about in the last minute, as the breaker's tenant scopes decide; a call of several
  tenants is each of theirs). Never above what the operator configured.
  * 429 with Retry-After: the scope stops until then (admission sends no call into it), and is
    cut: its effective concurrency, and the handler scope's rate, times ARGV[4] / 1000 (at least
    1), once per wave: only calls admitted after the scope's last cut cut it again. The first 429
    after a raise takes that raise back instead (the probe found the partner's limit); repeated
    429s cut multiplicatively.
  * Timeouts: the second in a row in a scope (no success between) cuts it likewise, with no stop.
  * Successes in a scope cut below its configured limits raise it additively, one call (and a
    twentieth of the configured rate) at a time, at most once per probe interval: ARGV[6] times
    the last Retry-After, at least ARGV[5] (a raise that overshoots costs a Retry-After's stop,
    so it is tried seldom enough to cost little). Back at the configured limits with no stop
    left, the scope is forgotten.
  While any scope holds state, the breaker's adaptiveUntil says so (admission reads the flow hash then).
  Input:
    KEYS[1] breaker   hash: the tenants admission saw (includes/breakerAt) and adaptiveUntil
    KEYS[2] flow      hash, the handler's adaptive scopes (includes/flowState)
    ARGV[1] now (ms)
    ARGV[2] configured concurrency, 0 = unlimited (not adapted)
    ARGV[3] configured rate per minute, 0 = unlimited (not adapted)
    ARGV[4] decrease factor, per mille (700: a cut keeps 70 %)
    ARGV[5] shortest probe interval (ms)
    ARGV[6] probe interval, in last Retry-Afters
    ARGV[7] when the calls were admitted (ms)
    ARGV[8..] the calls, each as its answer ('ok' | '429' | 'timeout' | 'failed'), its Retry-After
              (ms, 0 for none), its tenant count t and its t tenantIds
  Output:
    pairs for each change: the scope ('h' or 't:<tenantId>'), 1 stopped | 2 cut | 3 raised | 4 restored
]]
local breakerKey = KEYS[1]
local flowKey = KEYS[2]

local now = tonumber(ARGV[1])
local concurrency = tonumber(ARGV[2])
local ratePerMinute = tonumber(ARGV[3])
local decrease = tonumber(ARGV[4]) / 1000
local probeFloorMs = tonumber(ARGV[5])
local probeRetryAfters = tonumber(ARGV[6])
local admittedAt = tonumber(ARGV[7])
local FIRST_CALL = 8

local STOPPED, CUT, RAISED, RESTORED = 1, 2, 3, 4
-- How recently admission must have seen another tenant for a tenant's answers to be its own.
local OTHER_TENANT_MS = 60000
-- How long admission keeps reading the flow hash after the last change.
local ADAPTIVE_MEMORY = 600000
local PROBE_LONGEST = 60000

--- @include "includes/breakerAt"
--- @include "includes/flowState"

local breaker = readBreaker(breakerKey)
local function otherTenantAbout(tenant)
  local function recent(at)
    return at ~= nil and now - at < OTHER_TENANT_MS
  end
  return (breaker.lastTenant and breaker.lastTenant ~= tenant and recent(breaker.lastTenantAt))
    or (breaker.lastTenant == tenant and recent(breaker.otherTenantAt))
end

-- The scopes a call's answer is about.
local function scopesOf(tenants)
  if #tenants == 0 or (#tenants == 1 and not otherTenantAbout(tenants[1])) then
    return { 'h' }
  end
  local scopes = {}
  for _, tenant in ipairs(tenants) do
    scopes[#scopes + 1] = 't:' .. tenant
  end
  return scopes
end

local states, loaded, changed = {}, {}, {}
local function stateOf(scope, create)
  if not loaded[scope] then
    loaded[scope] = true
    states[scope] = parseScopeState(redis.call('HGET', flowKey, scope))
  end
  if states[scope] == nil and create then
    states[scope] = parseScopeState('0|0|0|0|0||0|0|0|0')
  end
  return states[scope]
end

local reply = {}
local function tell(scope, event)
  reply[#reply + 1] = scope
  reply[#reply + 1] = event
end

local function cut(scope, state, reason)
  if admittedAt <= state.cutAt then
    return
  end
  if concurrency > 0 then
    if reason == '429' and state.raisedFrom > 0 then
      state.conc = state.raisedFrom
    else
      state.conc = math.max(1, math.floor((state.conc > 0 and state.conc or concurrency) * decrease))
    end
  end
  if ratePerMinute > 0 and scope == 'h' then
    state.rate = math.max(1, math.floor((state.rate > 0 and state.rate or ratePerMinute) * decrease))
  end
  state.reason, state.cutAt, state.changedAt, state.strikes, state.raisedFrom = reason, now, now, 0, 0
  changed[scope] = true
  tell(scope, CUT)
end

local succeeded = {}
local call = FIRST_CALL
while call <= #ARGV do
  local answer = ARGV[call]
  local retryAfter = tonumber(ARGV[call + 1])
  local tenantCount = tonumber(ARGV[call + 2])
  local tenants = {}
  for t = 1, tenantCount do
    tenants[t] = ARGV[call + 2 + t]
  end
  call = call + 3 + tenantCount
  if answer == 'ok' then
    succeeded['h'] = true
    for _, tenant in ipairs(tenants) do
      succeeded['t:' .. tenant] = true
    end
  elseif answer == '429' or answer == 'timeout' then
    for _, scope in ipairs(scopesOf(tenants)) do
      local state = stateOf(scope, true)
      if answer == '429' then
        if now + retryAfter > state.stopUntil then
          state.stopUntil = now + retryAfter
          tell(scope, STOPPED)
        end
        state.retryAfterMs, state.retryAfterAt = retryAfter, now
        changed[scope] = true
        cut(scope, state, '429')
      else
        state.strikes = state.strikes + 1
        changed[scope] = true
        if state.strikes >= 2 then
          cut(scope, state, 'timeout')
        end
      end
    end
  end
end

for scope in pairs(succeeded) do
  local state = stateOf(scope, false)
  if state and not changed[scope] then
    state.strikes = 0
    local interval = math.min(PROBE_LONGEST, math.max(probeFloorMs, probeRetryAfters * state.retryAfterMs))
    if (state.conc > 0 or state.rate > 0) and now >= state.stopUntil and now - state.changedAt >= interval then
      if state.conc > 0 then
        state.raisedFrom = state.conc
        state.conc = state.conc + 1
        if state.conc >= concurrency then
          state.conc = 0
        end
      end
      if state.rate > 0 then
        state.rate = state.rate + math.max(1, math.floor(ratePerMinute / 20))
        if state.rate >= ratePerMinute then
          state.rate = 0
        end
      end
      state.changedAt = now
      tell(scope, RAISED)
    end
    changed[scope] = true
  end
end

local kept = false
for scope in pairs(changed) do
  local state = states[scope]
  if state.conc == 0 and state.rate == 0 and state.stopUntil <= now and state.strikes == 0 then
    redis.call('HDEL', flowKey, scope)
    tell(scope, RESTORED)
  else
    writeScopeState(flowKey, scope, state)
    kept = true
  end
end
if kept then
  redis.call('PEXPIRE', flowKey, ADAPTIVE_MEMORY)
  if breaker.adaptiveUntil < now + ADAPTIVE_MEMORY / 2 then
    redis.call('HSET', breakerKey, 'adaptiveUntil', now + ADAPTIVE_MEMORY)
  end
end
return reply
