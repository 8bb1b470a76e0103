--[[
  Give back what the handler script took for items that were deferred by another check (the
  tenant window) in the same admission: lease, rate entry and probe. The handler was not called.
  Input:
    KEYS[1] leases    sorted set itemId -> lease expiry (ms)
    KEYS[2] rate      sorted set itemId:admittedAt -> admission time (ms)
    KEYS[3] probes    sorted set itemId -> probe expiry (ms)
    ARGV[1] the admission's time (ms): its rate entries are itemId:admittedAt
    ARGV[2..] itemIds
  Output:
    { number of leases released }
]]
local leasesKey = KEYS[1]
local rateKey = KEYS[2]
local probesKey = KEYS[3]

local admittedAt = ARGV[1]
local FIRST_ITEM = 2

--- @include "includes/sliced"

local rateEntries = {}
for i = FIRST_ITEM, #ARGV do
  rateEntries[#rateEntries + 1] = ARGV[i] .. ':' .. admittedAt
end

local released = callSliced('ZREM', leasesKey, ARGV, FIRST_ITEM, #ARGV)
callSliced('ZREM', rateKey, rateEntries, 1, #rateEntries)
callSliced('ZREM', probesKey, ARGV, FIRST_ITEM, #ARGV)
return { released }
