-- A tenant's window of slots (KEYS window of admitTenant): one entry per slot, scored by its time,
-- past ones for windowMs, future ones (reservations) until they pass. Needs the caller's locals
-- windowKey, now, windowMs, limit, shortestMs and count (the entries after now - windowMs).
--
-- Where a new slot goes, behind every slot there is (first come, first served):
--   * no window may hold more than `limit` slots: a window ending at the new slot starts after the
--     slot `limit` places back, so the slot lies windowMs after that one;
--   * the window still holding room is not filled at once: its last part comes paced, spread evenly
--     up to when its oldest slot leaves it, so a slot of this tenant comes due every few hundred
--     ms instead of all at once, and a more urgent item always finds one near to take (see
--     includes/urgentRoom);
--   * past that, slots follow each other at windowMs / limit: the tenant's limit, evenly;
--   * never sooner than shortestMs from now.

-- The score of the entry at `rank` (0 = oldest, -1 = latest), or nil.
local function slotAt(rank)
  local entry = redis.call('ZRANGE', windowKey, rank, rank, 'WITHSCORES')
  return entry[2] and tonumber(entry[2])
end

local function nextSlot()
  local at = now + shortestMs
  local latest = slotAt(-1)
  if count >= limit then
    at = math.max(at, slotAt(count - limit) + windowMs)
    if latest then
      at = math.max(at, latest + windowMs / limit)
    end
  elseif latest and latest > now then
    local edge = slotAt(0) + windowMs
    at = math.max(at, latest + math.max(windowMs / limit, (edge - latest) / (limit - count)))
  end
  return at
end

