#!/bin/bash
# Full garbage collections of the event loop's heap under a load of one of npm run bench's
# scenarios (S4 by default): docs/performance.md. Server on CPU 0 with --trace-gc, wrk on CPU 1.
#   bash bench/micro/full-collections.sh dist/main.js
#   SCENARIO=S4 SECONDS_=8 bash bench/micro/full-collections.sh bench/fastify-floor/server.mjs
# Prints: requests answered, full collections (Mark-Compact) of the main thread, requests per collection.
set -euo pipefail
cd "$(dirname "$0")/../.."
entry=$1
shift
work=$(mktemp -d)
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
pid=
# The scenario's request, as npm run bench sends it.
npx tsx -e "
  import { writeFileSync } from 'node:fs';
  import { scenarios } from './bench/scenarios.ts';
  const s = scenarios().find((x) => x.id === '${SCENARIO:-S4}');
  if (!s) throw new Error('no scenario ${SCENARIO:-S4}');
  writeFileSync('$work/body', s.body ?? '');
  writeFileSync('$work/request', [s.method, s.path, s.connections ?? 50].join(' ') + '\n');
" 2> /dev/null
read -r method path connections < "$work/request"
printf 'wrk.method = "%s"\nwrk.headers["Content-Type"] = "application/json"\nlocal f = assert(io.open("%s", "rb"))\nwrk.body = f:read("*a")\nf:close()\n' "$method" "$work/body" > "$work/request.lua"
[ "$method" = GET ] && printf 'wrk.method = "GET"\n' > "$work/request.lua"
env "$@" WORKERS=1 DRAIN_DELAY_MS=0 PORT=3999 HOST=127.0.0.1 taskset -c 0 node --trace-gc "$entry" > "$work/gc.log" 2>&1 &
pid=$!
url="http://127.0.0.1:3999$path"
for _ in $(seq 100); do curl -s -o /dev/null http://127.0.0.1:3999/ && break; sleep 0.05; done
taskset -c 1 wrk -t1 -c"$connections" -d1s -s "$work/request.lua" "$url" > /dev/null # warm-up
# The main thread's isolate is the one that logged the first collection; worker threads have others.
main=$(grep -a -m1 -o '^\[[0-9]*:0x[0-9a-f]*\]' "$work/gc.log")
before=$(grep -a -F "$main" "$work/gc.log" | grep -ac Mark-Compact || true)
n=$(taskset -c 1 wrk -t1 -c"$connections" -d"${SECONDS_:-8}"s -s "$work/request.lua" "$url" | awk '/requests in/ {print $1}')
after=$(grep -a -F "$main" "$work/gc.log" | grep -ac Mark-Compact || true)
full=$((after - before))
echo "$n requests, $full full collections of the event loop's heap, $(echo "scale=1; $n / $((full > 0 ? full : 1))" | bc) requests per collection"
