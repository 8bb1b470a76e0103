-- Room for an item of the most urgent priority now, in a tenant's window (includes/tenantSlots),
-- with no window ever holding more than `limit` slots. Needs the caller's locals windowKey, now,
-- windowMs, limit.
--
-- Admitting a slot now adds one to every window (x - windowMs, x] with x in [now, now + windowMs).
-- Let x* be the first of them already full. None: there is room now. x* = now: there is none now.
-- Otherwise, giving up a future lower-priority slot s in (now, x*] makes room: every window before
-- s has room for one more, and from s on the slot taken now replaces s. Counts change only where a
-- slot enters a window, so x* is found among now and the future slots.
-- Returns nil when there is room now, else x* (now included).
local function firstFullWindow()
  local scores = redis.call('ZRANGEBYSCORE', windowKey, '(' .. (now - windowMs), '(' .. (now + windowMs), 'WITHSCORES')
  local times = {}
  for k = 2, #scores, 2 do
    times[#times + 1] = tonumber(scores[k])
  end
  local lo, hi = 1, 0
  local function full(x)
    while hi < #times and times[hi + 1] <= x do
      hi = hi + 1
    end
    while lo <= hi and times[lo] <= x - windowMs do
      lo = lo + 1
    end
    return hi - lo + 1 >= limit
  end
  if full(now) then
    return now
  end
  for k = 1, #times do
    if times[k] > now and full(times[k]) then
      return times[k]
    end
  end
  return nil
end
