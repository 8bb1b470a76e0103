--[[
  Count a tenant's deferrals of the current five minutes by handler and reason, for "why is it
  waiting?" (GET /tenants/{tenantId}). Rides along a round trip the guard makes anyway; the hash
  expires on its own.
  Input:
    KEYS[1] waits     hash "integrationKey|handlerKey|reason" -> deferrals in those five minutes
    ARGV[1] time to live of the hash (ms)
    ARGV[2..] pairs: field, count
  Output:
    { number of fields counted }
]]
local waitsKey = KEYS[1]

local ttl = tonumber(ARGV[1])
local FIRST_PAIR = 2

local counted = 0
for i = FIRST_PAIR, #ARGV, 2 do
  redis.call('HINCRBY', waitsKey, ARGV[i], tonumber(ARGV[i + 1]))
  counted = counted + 1
end
redis.call('PEXPIRE', waitsKey, ttl)
return { counted }
