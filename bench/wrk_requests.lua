-- wrk script for requests that are not all the same; the figures are written as bench/wrk_report.lua
-- writes them.
--   WRK_TOKENS  a comma list of whole Authorization values: each request carries the next of them,
--               each thread starting at its own place, so the connections act as that many clients
--               rather than one.
--   WRK_FRESH   1: each request adds `pb_bench_fresh=<thread>.<n>` to its address, a parameter the API
--               ignores (and names in `meta.ignored`), so no two requests ask the same list and none is
--               answered from a kept answer (docs/caching.md): every list reads its page
--               (`bench/run --fresh`).
dofile(os.getenv("WRK_REPORT"))

local threads = 0
setup = function(thread)
  thread:set("first", threads)
  threads = threads + 1
end

local tokens, place, sent = {}, 0, 0
local fresh = os.getenv("WRK_FRESH") == "1"
init = function(_)
  for value in string.gmatch(os.getenv("WRK_TOKENS") or "", "[^,]+") do
    tokens[#tokens + 1] = value
  end
  place = first * math.floor(#tokens / 2)
end

request = function()
  local path, headers = nil, nil
  if fresh then
    sent = sent + 1
    local joint = string.find(wrk.path, "?", 1, true) and "&" or "?"
    path = wrk.path .. joint .. "pb_bench_fresh=" .. first .. "." .. sent
  end
  if #tokens > 0 then
    place = place % #tokens + 1
    headers = {}
    for name, value in pairs(wrk.headers) do
      headers[name] = value
    end
    headers["Authorization"] = tokens[place]
  end
  return wrk.format(nil, path, headers)
end
