#!/usr/bin/env bash
# The README's serve command: sets up what serving needs (scripts/setup.sh
# --serve: what xtask's builds need; Rust itself comes from rustup), then
# `cargo xtask serve` builds what setup needs xtask for (the C adapter, the
# QuickJS parts), the example actors and the host, and serves them
# on http://127.0.0.1:8787 (Ctrl-C stops it; ADR 082). Extra arguments go to
# `wasmkeep-shim serve` (e.g. --listen 127.0.0.1:0 --virtual-clock).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --serve
exec cargo xtask serve --setup-done -- "$@"
