-- A handler's flow state, one hash on the integration's slot (the flow key of admitHandler and
-- adaptLimits):
--   'h'          the handler's adaptive scope, 't:<tenant>' a tenant's scope of the handler, each
--                "concurrency|rate|stopUntil|retryAfterMs|retryAfterAt|reason|cutAt|changedAt|strikes|raisedFrom":
--                AIMD's effective limits (0 = as configured), when calls may go into the scope again
--                (a Retry-After), the last Retry-After and when it came, why the scope was last cut
--                ('429' or 'timeout'), when it was cut and last changed, timeouts in a row, and the
--                concurrency it had before its last raise (0 when not raised since its last cut);
--   'w:<tenant>' a tenant waiting for one of the handler's leases: "weight|until".
-- Absent = as configured, nobody waiting.
local function parseScopeState(value)
  if not value then
    return nil
  end
  local f = {}
  for part in string.gmatch(value, '([^|]*)|?') do
    f[#f + 1] = part
  end
  return {
    conc = tonumber(f[1]) or 0, rate = tonumber(f[2]) or 0, stopUntil = tonumber(f[3]) or 0,
    retryAfterMs = tonumber(f[4]) or 0, retryAfterAt = tonumber(f[5]) or 0, reason = f[6] or '',
    cutAt = tonumber(f[7]) or 0, changedAt = tonumber(f[8]) or 0, strikes = tonumber(f[9]) or 0,
    raisedFrom = tonumber(f[10]) or 0,
  }
end

local function writeScopeState(flowKey, field, s)
  redis.call('HSET', flowKey, field, s.conc .. '|' .. s.rate .. '|' .. s.stopUntil .. '|' .. s.retryAfterMs .. '|'
    .. s.retryAfterAt .. '|' .. s.reason .. '|' .. s.cutAt .. '|' .. s.changedAt .. '|' .. s.strikes .. '|' .. s.raisedFrom)
end

-- Every scope and waiting tenant in the hash; waiting marks past their time are removed.
local function readFlow(flowKey, now)
  local flow = { scopes = {}, waiting = {} }
  local fields = redis.call('HGETALL', flowKey)
  local stale = {}
  for i = 1, #fields, 2 do
    local name, value = fields[i], fields[i + 1]
    if string.sub(name, 1, 2) == 'w:' then
      local weight, untilAt = string.match(value, '^(%d+)|(%d+)$')
      if tonumber(untilAt or 0) > now then
        flow.waiting[string.sub(name, 3)] = { weight = tonumber(weight), untilAt = tonumber(untilAt) }
      else
        stale[#stale + 1] = name
      end
    else
      flow.scopes[name] = parseScopeState(value)
    end
  end
  if #stale > 0 then
    redis.call('HDEL', flowKey, unpack(stale))
  end
  return flow
end
