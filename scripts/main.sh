#!/usr/bin/env bash
# Sets up what is missing, builds the example actors and serves them with the
# local host on http://127.0.0.1:8787 (Ctrl-C stops it). Extra arguments go to
# `wasmkeep-shim serve` (e.g. --listen 127.0.0.1:0 --virtual-clock).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --serve
cargo xtask guests
# On a terminal cargo shows its progress bar (the release build takes minutes
# the first time); elsewhere it stays quiet.
if [ -t 2 ]; then quiet=(); else quiet=(--quiet); fi
echo "main: building wasmkeep-shim (release)" >&2
cargo build "${quiet[@]}" --release -p wasmkeep-shim
exec target/release/wasmkeep-shim serve --manifest examples/wasmkeep.toml --data-dir target/examples-data "$@"
