-- wrk script: each request carries the next of the tokens in $WRK_TOKENS (comma list of whole
-- Authorization values), each thread starting at its own place, so the connections act as that many
-- clients rather than one; the figures are written as bench/wrk_report.lua writes them.
dofile(os.getenv("WRK_REPORT"))

local threads = 0
setup = function(thread)
  thread:set("first", threads)
  threads = threads + 1
end

local tokens, place = {}, 0
init = function(_)
  for value in string.gmatch(os.getenv("WRK_TOKENS"), "[^,]+") do
    tokens[#tokens + 1] = value
  end
  place = first * math.floor(#tokens / 2)
end

request = function()
  place = place % #tokens + 1
  return wrk.format(nil, nil, { ["Authorization"] = tokens[place] })
end
