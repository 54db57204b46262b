#!/bin/bash
# CPU time and context switches per request of one server process under wrk, for changes below
# npm run bench's noise (bench/results/ab/log-buffer.md). Server on CPU 0, wrk on CPU 1.
#   bash bench/micro/context-switches.sh dist/main.js ACCESS_LOG=all
#   URL=http://127.0.0.1:3999/api/isOdd/12345 SECONDS_=4 bash bench/micro/context-switches.sh ENTRY [NAME=VALUE...]
# Prints: requests per second, CPU µs per request (all threads), context switches per request.
set -euo pipefail
cd "$(dirname "$0")/../.."
entry=$1
shift
url=${URL:-http://127.0.0.1:3999/api/isOdd/12345}
log=$(mktemp)
env "$@" WORKERS=1 DRAIN_DELAY_MS=0 PORT=3999 HOST=127.0.0.1 taskset -c 0 node "$entry" > "$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 100); do curl -s -o /dev/null "$url" && break; sleep 0.05; done
taskset -c 1 wrk -t1 -c50 -d1s "$url" > /dev/null # warm-up
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; } # user + system clock ticks (10 ms)
switches() { cat /proc/"$pid"/task/*/status | awk '/ctxt_switches/ {s += $2} END {print s}'; }
t0=$(cpu)
c0=$(switches)
out=$(taskset -c 1 wrk -t1 -c50 -d"${SECONDS_:-4}"s "$url")
t1=$(cpu)
c1=$(switches)
n=$(echo "$out" | awk '/requests in/ {print $1}')
rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
echo "$rps req/s, $(echo "scale=2; ($t1 - $t0) * 10000 / $n" | bc) µs CPU per request, $(echo "scale=3; ($c1 - $c0) / $n" | bc) context switches per request"
