--[[
  Give back what a handler admission took: the leases of calls made (a report) or not to be made,
  and the probes and urgent markers of its items; for items that were not called after all (the
  tenant window deferred them in the same admission, or the caller's lanes ran out of time), also
  their rate entries: the handler was not called for them.
  Input:
    KEYS[1] rate      sorted set itemId:admittedAt -> admission time (ms)
    KEYS[2] probes    sorted set itemId -> probe expiry (ms)
    KEYS[3] urgent    sorted set itemId -> until when (ms) an urgent item waits or runs
    KEYS[4] leases    sorted set lease member -> lease expiry (ms)
    KEYS[5] waiters   string, present while a worker waits for a lease of this handler
    KEYS[6] freed     list, the doorbell: one ring per lease given back while one waits
    ARGV[1] the admission's time (ms), whose rate entries (itemId:admittedAt) of the items are given
            back; '-' when the items were called (their rate entries stay)
    ARGV[2] number of lease members given back, l
    ARGV[3..] the l lease members, then the itemIds
  Output:
    { number of rate entries given back }
]]
local rateKey = KEYS[1]
local probesKey = KEYS[2]
local urgentKey = KEYS[3]
local leasesKey = KEYS[4]
local waitersKey = KEYS[5]
local freedKey = KEYS[6]

local admittedAt = ARGV[1]
local tokenCount = tonumber(ARGV[2])
local FIRST_TOKEN = 3
local FIRST_ITEM = FIRST_TOKEN + tokenCount

--- @include "includes/sliced"
--- @include "includes/ringFreed"

if tokenCount > 0 then
  ringFreed(waitersKey, freedKey, callSliced('ZREM', leasesKey, ARGV, FIRST_TOKEN, FIRST_ITEM - 1))
end
if FIRST_ITEM > #ARGV then
  return { 0 }
end
local released = 0
if admittedAt ~= '-' then
  local rateEntries = {}
  for i = FIRST_ITEM, #ARGV do
    rateEntries[#rateEntries + 1] = ARGV[i] .. ':' .. admittedAt
  end
  released = callSliced('ZREM', rateKey, rateEntries, 1, #rateEntries)
end
callSliced('ZREM', probesKey, ARGV, FIRST_ITEM, #ARGV)
callSliced('ZREM', urgentKey, ARGV, FIRST_ITEM, #ARGV)
return { released }
