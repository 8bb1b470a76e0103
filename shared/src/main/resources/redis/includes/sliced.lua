-- Commands over many values go in slices: unpack() of more than about 8,000 values overflows
-- Lua's C stack ("too many results to unpack"), and a batch may carry more items than that.
local SLICE = 1000

-- `command key values[first..last]`, at most SLICE values per call (score/member pairs kept
-- together when stride is 2); returns the sum of the integer replies.
local function callSliced(command, key, values, first, last, stride)
  local size = SLICE - SLICE % (stride or 1)
  local sum = 0
  for from = first, last, size do
    sum = sum + redis.call(command, key, unpack(values, from, math.min(from + size - 1, last)))
  end
  return sum
end

-- ZMSCORE in slices: the scores of values[first..last] in order, false where absent.
local function scoresSliced(key, values, first, last)
  local scores = {}
  for from = first, last, SLICE do
    local reply = redis.call('ZMSCORE', key, unpack(values, from, math.min(from + SLICE - 1, last)))
    for i = 1, #reply do
      scores[#scores + 1] = reply[i]
    end
  end
  return scores
end
