-- wrk script for the write requests (bench/writes.py sets the environment):
--   WRITE_KIND  create | update | delete
--   WRITE_PATH  the collection's address (create) or the record address without its id
--   WRITE_BODY  the JSON body of a create or an update
--   WRITE_AUTH  the Authorization header's value
--   WRITE_FIRST, WRITE_COUNT  ids to touch: WRITE_FIRST .. WRITE_FIRST + WRITE_COUNT - 1
--   WRITE_WIDTH  0, or the width an id is zero-padded to (PocketBase's 15 characters)
--   WRITE_THREADS  wrk's -t;  WRK_REPORT  bench/wrk_report.lua, whose done() writes the figures
-- Every request of every connection names a distinct id: thread t of n sends first + t, + t + n, …
-- (an update wraps round its range; a delete never does, bench/writes.py gives it rows enough).
local kind = os.getenv("WRITE_KIND")
local path = os.getenv("WRITE_PATH")
local body = os.getenv("WRITE_BODY")
local first = tonumber(os.getenv("WRITE_FIRST") or "1")
local count = tonumber(os.getenv("WRITE_COUNT") or "1")
local width = tonumber(os.getenv("WRITE_WIDTH") or "0")
local headers = {["Authorization"] = os.getenv("WRITE_AUTH"), ["Content-Type"] = "application/json"}
local step = tonumber(os.getenv("WRITE_THREADS") or "1")
local made = 0
index = 0 -- this thread's number, set by setup() below
sent = 0
dofile(os.getenv("WRK_REPORT"))

function setup(thread)
  thread:set("index", made)
  made = made + 1
end

local function id_of(n)
  if width > 0 then return string.format("%0" .. width .. "d", n) end
  return tostring(n)
end

function request()
  local n = index + step * sent
  sent = sent + 1
  if kind == "create" then
    return wrk.format("POST", path, headers, body)
  end
  if kind == "update" then
    return wrk.format("PATCH", path .. id_of(first + n % count), headers, body)
  end
  return wrk.format("DELETE", path .. id_of(first + n), headers, nil)
end
