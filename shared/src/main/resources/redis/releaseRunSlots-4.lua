--[[
  Give back the future slots of a cancelled run's items: none of them is called any more, so the
  tenant's next items take those slots instead of waiting behind them. Due and past slots stay
  (the window counts what was admitted). The future slots a tenant holds are bounded by its
  horizon, which bounds this scan.
  Input:
    KEYS[1] window    sorted set member -> slot time (ms)
    KEYS[2] backlog   sorted set member -> future slot (ms), one priority
    KEYS[3] backlog   the same, another priority
    KEYS[4] backlog   the same, another priority
    ARGV[1] now (ms)
    ARGV[2] the run's tag: its items' members end with @ and it
  Output:
    { number of slots given back }
]]
local windowKey = KEYS[1]

local now = tonumber(ARGV[1])
local suffix = '@' .. ARGV[2]

--- @include "includes/sliced"

local released = {}
for _, member in ipairs(redis.call('ZRANGEBYSCORE', windowKey, '(' .. now, '+inf')) do
  if string.sub(member, -#suffix) == suffix then
    released[#released + 1] = member
  end
end
if #released == 0 then
  return { 0 }
end
local count = callSliced('ZREM', windowKey, released, 1, #released)
for k = 2, #KEYS do
  callSliced('ZREM', KEYS[k], released, 1, #released)
end
return { count }
