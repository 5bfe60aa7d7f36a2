-- auth.lua -- wrk script: send "Authorization: Bearer $BENCH_TOKEN" with
-- every request (bench/http.py sets BENCH_TOKEN to a token the server issued).
local token = os.getenv("BENCH_TOKEN")
if token ~= nil and token ~= "" then
   wrk.headers["Authorization"] = "Bearer " .. token
end
wrk.headers["Host"] = "localhost"
