-- The doorbell of a handler's leases: while a worker waits for a lease (admitHandler left the
-- waiters flag, holding the concurrency limit), every lease given back pushes one ring, and a
-- waiter blocked on the list wakes for it, instead of polling. Rings are kept to the limit, and
-- for a minute; admission empties the list whenever it finds no lease free, so a ring nobody took
-- is not left to wake a later waiter for nothing. Needs includes/sliced.
local RINGS_KEPT_MS = 60000
local function ringFreed(waitersKey, freedKey, released)
  if released <= 0 then
    return
  end
  local waiting = redis.call('GET', waitersKey)
  if not waiting then
    return
  end
  local rings = {}
  for i = 1, math.min(released, tonumber(waiting)) do
    rings[i] = '1'
  end
  callSliced('LPUSH', freedKey, rings, 1, #rings)
  redis.call('LTRIM', freedKey, 0, tonumber(waiting) - 1)
  redis.call('PEXPIRE', freedKey, RINGS_KEPT_MS)
end
