#!/usr/bin/env bash
# What a real network's latency costs a cluster (not run by the suite): N `juno node` processes on this machine, each
# pinned to a core, and the same coordinator run alternately straight to them and through DelayProxy relays that hold
# every chunk DELAY_MS each way (every coordinator-node and node-node link: peers dial the addresses the coordinator
# names, which are the relays). This stands in for `tc netem delay` on kernels built without sch_netem.
# Prints, per round and setting, decode tok/s (greedy /v1/completions: 40-token minus 8-token request time over the 32
# tokens between) and the nodes' own counters for the 40-token request (bytes out and in, mean call ms), then medians.
# Usage: src-test-e2e/delay-cluster.sh MODEL [NODES=2] [PTYPE=pipeline] [DELAY_MS=1] [ROUNDS=3]
#        (run from the repository root after ./mvnw -DskipTests verify, which also compiles the relay)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODEL="$(realpath "${1:?model}")"
NODES="${2:-2}"
PTYPE="${3:-pipeline}"
DELAY="${4:-1}"
ROUNDS="${5:-3}"
JAVA="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java"
CP="$ROOT/src-test-e2e/target/test-classes"
LOGS="$(mktemp -d /tmp/juno-delay-XXXXXX)"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
API=$(free_port)
CORES=$(nproc)
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null || true' EXIT
# ranks on this host would pass partials in shared memory, around the relays: measure the network path
export JUNO_PEER_SHM=0
[ -f "$CP/ml/juno/e2e/harness/DelayProxy.class" ] || { echo "build first: ./mvnw -DskipTests verify" >&2; exit 2; }

direct=() relayed=() args=()
for i in $(seq 1 "$NODES"); do
  port=$(free_port) relay=$(free_port)
  taskset -c $(((i - 1) % CORES)) "$ROOT/juno" node --host 127.0.0.1 --port "$port" --node-id "n$i" \
    --models-dir "$(dirname "$MODEL")" > "$LOGS/node$i.log" 2>&1 &
  PIDS+=($!)
  direct+=("127.0.0.1:$port") relayed+=("127.0.0.1:$relay")
  args+=("$relay" "127.0.0.1:$port" "$DELAY")
done
"$JAVA" -cp "$CP" ml.juno.e2e.harness.DelayProxy "${args[@]}" > "$LOGS/relay.log" 2>&1 &
PIDS+=($!)
join() { local IFS=,; echo "$*"; }

request() { # max_tokens → seconds, completion tokens
  curl -s -o "$LOGS/r.json" -w '%{time_total}' "http://127.0.0.1:$API/v1/completions" -H 'Content-Type: application/json' \
    -d "{\"prompt\":\"Once upon a time\",\"max_tokens\":$1,\"temperature\":0}"
  echo " $(grep -o '"completion_tokens":[0-9]*' "$LOGS/r.json" | cut -d: -f2)"
}

measure() { # nodes list, label
  "$ROOT/juno" coordinator -m "$MODEL" --nodes "$1" --pType "$PTYPE" --api-port "$API" > "$LOGS/coord-$2.log" 2>&1 &
  local c=$!
  until curl -sf "http://127.0.0.1:$API/q/health/ready" > /dev/null; do sleep 0.5; kill -0 $c; done
  request 8 > /dev/null; request 40 > /dev/null; request 40 > /dev/null # warm-up (JIT)
  read -r t8 n8 < <(request 8)
  curl -s "http://127.0.0.1:$API/v1/cluster/health" > "$LOGS/h0.json"
  read -r t40 n40 < <(request 40)
  curl -s "http://127.0.0.1:$API/v1/cluster/health" > "$LOGS/h1.json"
  kill $c; wait $c 2>/dev/null || true
  python3 - "$2" "$t8" "$n8" "$t40" "$n40" "$LOGS/h0.json" "$LOGS/h1.json" <<'PY'
import json, sys
label, t8, n8, t40, n40 = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
h0, h1 = (json.load(open(p))["nodes"] for p in sys.argv[6:8])
rate = (n40 - n8) / (t40 - t8)
sent = sum(b["bytesSent"] - a["bytesSent"] for a, b in zip(h0, h1))
recv = sum(b["bytesReceived"] - a["bytesReceived"] for a, b in zip(h0, h1))
calls = sum(b["calls"] - a["calls"] for a, b in zip(h0, h1))
ms = sum(b["meanCallMs"] * b["calls"] - a["meanCallMs"] * a["calls"] for a, b in zip(h0, h1)) / max(1, calls)
print(f"{label}\t{rate:.2f} tok/s\t{n40} tokens\tcoordinator<->nodes {sent / n40 / 1024:.1f} KB out, {recv / n40 / 1024:.1f} KB in per token\tmean call {ms:.2f} ms")
PY
}

echo "$(lscpu | sed -n 's/^Model name: *//p'), $NODES-node $PTYPE, $DELAY ms each way on every relayed link; load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$ROUNDS"); do
  measure "$(join "${direct[@]}")" direct
  measure "$(join "${relayed[@]}")" "delay${DELAY}ms"
done | tee "$LOGS/results.tsv"
for label in direct "delay${DELAY}ms"; do
  awk -F'\t' -v l="$label" '$1 == l {split($2, a, " "); print a[1]}' "$LOGS/results.tsv" | sort -n \
    | awk -v l="$label" '{v[NR] = $1} END {print l " median " v[int((NR + 1) / 2)] " tok/s"}'
done
echo "logs: $LOGS; load after $(cut -d' ' -f1-3 /proc/loadavg)"
