--[[
  Give back the tenant slots of items the tenant window admitted but another check (pause,
  breaker, handler limits) deferred in the same admission. Slots after the cutoff are kept: a
  deferred item still comes back to its reserved slot; a paused item (cutoff = all) does not.
  Input:
    KEYS[1] window    sorted set member -> slot time (ms)
    ARGV[1] cutoff (ms): slots at or before it are given back
    ARGV[2..] members (the itemId, then @ and its run's tag)
  Output:
    { number of slots given back }
]]
local windowKey = KEYS[1]

local cutoff = tonumber(ARGV[1])
local FIRST_ITEM = 2

local refunded = 0
for i = FIRST_ITEM, #ARGV do
  local slot = redis.call('ZSCORE', windowKey, ARGV[i])
  if slot and tonumber(slot) <= cutoff then
    refunded = refunded + redis.call('ZREM', windowKey, ARGV[i])
  end
end
return { refunded }
