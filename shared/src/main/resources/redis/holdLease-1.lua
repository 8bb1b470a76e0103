--[[
  Keep a concurrency lease for an item that waits for its callback (configs.pending_holds_lease):
  the lease counts against the handler's concurrency like a call's, and frees itself at the wait's
  end if nothing gives it back before (the callback, the timeout, a cancel give it back with
  releaseHandler). The key lives at least as long as the lease; admitHandler sets its time to live
  back to the calls' lease time, so the scheduler's tick holds every waiting item's lease again
  (the same member and expiry: only the key's time to live changes).
  Input:
    KEYS[1] leases    sorted set token:expectedEndMs -> lease expiry (ms), one per call slot
    ARGV[1] now (ms)
    ARGV[2] the lease member, pending:itemId:untilMs (its expected end is the wait's end)
    ARGV[3] the wait's end (ms): the lease's expiry
  Output:
    1 when the lease was added, 0 when the item already held it
]]
local leasesKey = KEYS[1]

local now = tonumber(ARGV[1])
local member = ARGV[2]
local untilMs = tonumber(ARGV[3])

local added = redis.call('ZADD', leasesKey, untilMs, member)
if redis.call('PTTL', leasesKey) < untilMs - now then
  redis.call('PEXPIRE', leasesKey, untilMs - now)
end
return added
