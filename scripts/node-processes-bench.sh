#!/usr/bin/env bash
# Two node processes (serve --mode cluster --node-id, ADR 028) of the counter
# example over one bucket, and what they sustain: requests/s to the holder and
# forwarded, and durable-delete latency (scripts/node_processes_bench.py);
# first, what they ask of the bucket: requests by purpose per idle node-hour
# (one node left idle for $WASMKEEP_BENCH_IDLE_S s, 20 by default) and per
# acknowledged write (issue 57); last, n1 is killed with `kill -9` and the
# time until n2 answers for the actor n1 held is printed.
#
#   bash scripts/node-processes-bench.sh BUCKET_URL
#
# BUCKET_URL: file:///DIR, or s3://…/az://… with the exports of
# scripts/s3-server.sh or scripts/azurite-server.sh (use a fresh prefix).
# Uses $WASMKEEP_SHIM when set, else target/release/wasmkeep-shim when built,
# else target/debug (built if missing), and target/components/counter-rust.wasm (cargo xtask guests).
# Stops the two processes it started, by their PIDs.
set -euo pipefail
cd "$(dirname "$0")/.."
url=${1:?usage: bash scripts/node-processes-bench.sh BUCKET_URL}
if [ -n "${WASMKEEP_SHIM:-}" ] && [ ! -x "$WASMKEEP_SHIM" ]; then
  echo "node-processes-bench: WASMKEEP_SHIM=$WASMKEEP_SHIM is not an executable file; build it or unset WASMKEEP_SHIM" >&2
  exit 2
fi
bin=${WASMKEEP_SHIM:-target/release/wasmkeep-shim}
if [ ! -x "$bin" ]; then
  bin=target/debug/wasmkeep-shim
  [ -x "$bin" ] || cargo build --quiet -p wasmkeep-shim
fi
echo "node-processes-bench: $bin over $url" >&2
work=$(mktemp -d)
pids=()
stop() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap stop EXIT
for n in 1 2; do
  "$bin" serve --manifest examples/counter-rust/wasmkeep.toml --mode cluster --node-id "n$n" \
    --bucket "$url" --data-dir "$work/n$n" --listen 127.0.0.1:0 >"$work/n$n.out" 2>"$work/n$n.err" &
  pids+=($!)
done
address() {
  for _ in $(seq 100); do
    if line=$(grep -m1 '^listening on ' "$work/$1.out" 2>/dev/null); then
      echo "$line" | awk '{print $3}' | sed 's#http://##'
      return
    fi
    sleep 0.1
  done
  echo "node-processes-bench: $1 did not start:" >&2
  cat "$work/$1.err" >&2
  exit 1
}
a1=$(address n1)
a2=$(address n2)
python3 scripts/node_processes_bench.py "$a1" "$a2" "${WASMKEEP_BENCH_IDLE_S:-20}"
# The holder of counter "one" (n1) killed without stopping: how long until n2
# answers for it (its lease lapses, then n2 takes the actor).
kill -9 "${pids[0]}"
python3 scripts/node_processes_bench.py takeover "$a2"
