--[[
  Give back what the handler script took for items that were deferred by another check (the
  tenant window) in the same admission: lease, rate entry and probe. The handler was not called.
  Input:
    KEYS[1] leases    sorted set itemId -> lease expiry (ms)
    KEYS[2] rate      sorted set itemId -> admission time (ms)
    KEYS[3] probes    sorted set itemId -> probe expiry (ms)
    ARGV[1..] itemIds
  Output:
    { number of leases released }
]]
local leasesKey = KEYS[1]
local rateKey = KEYS[2]
local probesKey = KEYS[3]

local released = redis.call('ZREM', leasesKey, unpack(ARGV))
redis.call('ZREM', rateKey, unpack(ARGV))
redis.call('ZREM', probesKey, unpack(ARGV))
return { released }
