#!/usr/bin/env bash
# Fault test (not run by the suite; see README-load.md): a 3-node pipeline `juno cluster` under steady load from
# js/loadtest.mjs while, every 20 s for 3 minutes, a random node is killed (kill -9) or frozen (kill -STOP, then -CONT
# 5 s later), and once the coordinator itself is killed. Afterwards: 50 requests in a row must succeed, KV blocks in use
# must be back to 0, and the coordinator's threads and file descriptors are printed before and after. Each failed
# request's time from the fault to its error event (from its start, for one sent after the fault) is printed per kind
# of fault (p50/max), and how many requests hung (still open 150 s after the load's end; must be 0).
# Usage: src-test-e2e/faults.sh [MODEL] [API_PORT]   (run from the repository root after ./mvnw -DskipTests package and
#        src-test-e2e/js/setup.sh src-test-e2e/target/js)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODEL="${1:-$ROOT/models/stories260K.gguf}"
PORT="${2:-18090}"
JS="$ROOT/src-test-e2e/target/js"
LOGS="$(mktemp -d /tmp/juno-faults-XXXXXX)"
URL="http://127.0.0.1:$PORT"

"$ROOT/juno" cluster -m "$MODEL" --nodes 3 --api-port "$PORT" --step-timeout 10s --log-dir "$LOGS" > "$LOGS/cluster.out" 2>&1 &
CLUSTER=$!
trap 'kill $CLUSTER 2>/dev/null || true' EXIT
until curl -sf "$URL/q/health/ready" >/dev/null; do sleep 1; kill -0 $CLUSTER; done
coordinator() { ps -o pid=,args= --ppid "$CLUSTER" | awk '/coordinator-service/ {print $1}'; }
nodes() { ps -o pid=,args= --ppid "$CLUSTER" | awk '/node-service/ {print $1}'; }
stat() { local p; p=$(coordinator); echo "threads $(awk '/Threads/ {print $2}' /proc/$p/status) fds $(ls /proc/$p/fd | wc -l)"; }
echo "before: $(stat)"

node "$JS/loadtest.mjs" "$URL/v1" "$(basename "$MODEL" .gguf)" --clients 16 --seconds 200 --max-tokens 48 \
  --events "$LOGS/errors.jsonl" > "$LOGS/load.json" &
LOAD=$!
for round in $(seq 1 9); do
  sleep 20
  victim=$(nodes | shuf -n 1)
  if [ "$round" = 5 ]; then
    c=$(coordinator); echo "round $round: kill -9 the coordinator $c"
    echo "$(date +%s%3N) coordinator-kill-9" >> "$LOGS/faults.txt"; kill -9 "$c"
  elif [ $((round % 2)) = 0 ]; then
    echo "round $round: kill -STOP node $victim, -CONT in 5 s"; echo "$(date +%s%3N) node-stop" >> "$LOGS/faults.txt"
    kill -STOP "$victim"; sleep 5; kill -CONT "$victim"
  else
    echo "round $round: kill -9 node $victim"; echo "$(date +%s%3N) node-kill-9" >> "$LOGS/faults.txt"; kill -9 "$victim"
  fi
done
wait $LOAD || true
echo "load: $(cat "$LOGS/load.json")"
touch "$LOGS/errors.jsonl"
node - "$LOGS/faults.txt" "$LOGS/errors.jsonl" <<'JS'
// each error is charged to the last fault before it: from the fault (or the request's start, if later) to the error
const fs = require('fs');
const faults = fs.readFileSync(process.argv[2], 'utf8').trim().split('\n').map((l) => { const [t, kind] = l.split(' '); return { t: Number(t), kind }; });
const errors = fs.readFileSync(process.argv[3], 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const by = {};
let unattributed = 0;
for (const e of errors) {
  const f = faults.filter((x) => x.t <= e.error).pop();
  if (!f) { unattributed++; continue; }
  (by[f.kind] = by[f.kind] || []).push(e.error - Math.max(f.t, e.start));
}
const pct = (a, p) => { const s = [...a].sort((x, y) => x - y); return s[Math.min(s.length - 1, Math.ceil(p / 100 * s.length) - 1)]; };
const out = {};
for (const [kind, a] of Object.entries(by)) out[kind] = { errors: a.length, p50_ms: pct(a, 50), max_ms: Math.max(...a) };
console.log('time to error: ' + JSON.stringify({ faults: faults.length, errors: errors.length, before_any_fault: unattributed, by_fault: out }));
JS
hung=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).hung)' "$LOGS/load.json" 2>/dev/null || echo "?")
until curl -sf "$URL/q/health/ready" >/dev/null; do sleep 1; done
ok=0
for i in $(seq 1 50); do
  if curl -sf "$URL/v1/completions" -H 'Content-Type: application/json' \
      -d "{\"model\":\"$(basename "$MODEL" .gguf)\",\"prompt\":\"Once\",\"max_tokens\":16}" >/dev/null; then ok=$((ok + 1)); fi
done
echo "after: $(stat); $ok of 50 requests in a row succeeded; KV blocks in use: $(curl -s "$URL/q/metrics" | awk '/^juno_kv_blocks_used/ {print $2}')"
echo "requests hung: $hung"
[ "$ok" = 50 ] && [ "$hung" = 0 ]
