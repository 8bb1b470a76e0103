-- A handler's rate log (the rate key of admitHandler): one entry per admission, "itemId:admittedAt"
-- scored by its time, for the last minute; a retried item counts each time.
local RATE_WINDOW_MS = 60000

-- Trims the log to the last minute; returns its entries.
local function rateLogNow(rateKey, now)
  redis.call('ZREMRANGEBYSCORE', rateKey, '-inf', now - RATE_WINDOW_MS)
  return redis.call('ZCARD', rateKey)
end

-- How long an item waits whose rate is used up, when `queued` items of this admission wait
-- before it: until the entry that many places ahead leaves the window, so deferred items queue
-- behind each other instead of all coming back at once (the log's entries of this admission
-- already written).
local function rateWait(rateKey, now, inWindow, limit, queued)
  local ahead = inWindow - limit + queued
  local delay
  if ahead < inWindow then
    local entry = redis.call('ZRANGE', rateKey, ahead, ahead, 'WITHSCORES')
    delay = tonumber(entry[2]) + RATE_WINDOW_MS - now
  else
    delay = RATE_WINDOW_MS * (1 + math.floor((ahead - inWindow) / limit))
  end
  return math.max(delay, 1)
end
