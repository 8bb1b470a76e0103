--[[
  Count admission deferrals into one period's hash: the deferrals of a minute by reason, for the
  operator's charts; a tenant's deferrals of five minutes by handler and reason, for "why is it
  waiting?" (GET /tenants/{tenantId}). Rides along a round trip the guard makes anyway; the hash
  expires on its own.
  Input:
    KEYS[1] deferrals  hash field (a reason, or "integrationKey|handlerKey|reason") -> deferrals in that period
    ARGV[1] time to live of the hash (ms)
    ARGV[2..] pairs: field, count
  Output:
    { number of fields counted }
]]
local deferralsKey = KEYS[1]

local ttl = tonumber(ARGV[1])
local FIRST_PAIR = 2

local counted = 0
for i = FIRST_PAIR, #ARGV, 2 do
  redis.call('HINCRBY', deferralsKey, ARGV[i], tonumber(ARGV[i + 1]))
  counted = counted + 1
end
redis.call('PEXPIRE', deferralsKey, ttl)
return { counted }
