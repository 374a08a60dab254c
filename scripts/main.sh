#!/usr/bin/env bash
# Sets up what is missing, builds the example actors and serves them with the
# local host on http://127.0.0.1:8787 (Ctrl-C stops it). Extra arguments go to
# `wasmkeep-shim serve` (e.g. --listen 127.0.0.1:0 --virtual-clock).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --serve
cargo xtask guests
cargo build --quiet --release -p wasmkeep-shim
exec target/release/wasmkeep-shim serve --manifest examples/wasmkeep.toml --data-dir target/examples-data "$@"
