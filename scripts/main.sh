#!/usr/bin/env bash
# Sets up what is missing, builds the example actors and serves them with the
# local host on http://127.0.0.1:8787 (Ctrl-C stops it). Extra arguments go to
# `wasmkeep-shim serve` (e.g. --listen 127.0.0.1:0 --virtual-clock).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --serve
cargo xtask guests
# The dev profile, not release: it is the build of wasmtime the test command
# uses too (one per profile, ADR 014), and it takes about half the time of a
# release build; wasmtime's compiler and SQLite are optimised in it
# (Cargo.toml's [profile.dev.package]), so components compile at release
# speed. Measurements use `cargo xtask bench`, which builds release (ADR 036).
# On a terminal cargo shows its progress bar (the first build takes minutes);
# elsewhere it stays quiet.
if [ -t 2 ]; then quiet=(); else quiet=(--quiet); fi
echo "main: building wasmkeep-shim (dev profile)" >&2
cargo build "${quiet[@]}" -p wasmkeep-shim
exec target/debug/wasmkeep-shim serve --manifest examples/wasmkeep.toml --data-dir target/examples-data "$@"
