-- wrk done() hook: writes the run's figures as one JSON object (latencies in µs) to $WRK_OUT.
done = function(summary, latency, requests)
  local e = summary.errors
  local f = assert(io.open(os.getenv("WRK_OUT"), "w"))
  f:write(string.format(
    '{"duration_us":%d,"requests":%d,"bytes":%d,"rps":%.2f,"lat_mean_us":%.1f,' ..
    '"lat_p50_us":%d,"lat_p90_us":%d,"lat_p99_us":%d,"lat_max_us":%d,' ..
    '"err_connect":%d,"err_read":%d,"err_write":%d,"err_status":%d,"err_timeout":%d}\n',
    summary.duration, summary.requests, summary.bytes, summary.requests / (summary.duration / 1e6),
    latency.mean, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout))
  f:close()
end
