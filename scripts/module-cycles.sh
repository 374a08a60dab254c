#!/usr/bin/env bash
# Fails when a host crate's modules import each other in a cycle (issue: the
# host as layers). cargo-modules draws each crate's module-level "uses" graph;
# graphviz's `acyclic -n` answers whether it has a cycle, and `sccmap` shows
# the modules of each cycle. (cargo-modules' own --acyclic also counts a type
# and its methods as a cycle, so the graph is checked at module level here.)
# Installs what is missing: graphviz (Debian), cargo-modules (crates.io).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v acyclic >/dev/null 2>&1; then
  echo "module-cycles: installing graphviz (Debian)"
  if [ "$(id -u)" = 0 ]; then sudo=(); else sudo=(sudo); fi
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends graphviz >/dev/null
fi
if ! cargo modules --version 2>/dev/null | grep -q "0.27.0"; then
  echo "module-cycles: installing cargo-modules 0.27.0 (cargo install; several minutes on 2 cores)"
  cargo install --quiet --locked cargo-modules --version 0.27.0
fi
failed=0
for crate in wasmkeep-store wasmkeep-host wasmkeep-shim; do
  dot=$(RUST_BACKTRACE=0 cargo modules dependencies -p "$crate" --lib \
    --no-fns --no-types --no-traits --no-owns --no-externs --no-sysroot 2>/dev/null)
  if acyclic -n <<<"$dot"; then
    echo "module-cycles: $crate: no import cycle among its modules"
  else
    echo "module-cycles: $crate: its modules import each other in a cycle:" >&2
    sccmap <<<"$dot" 2>/dev/null | grep -E '^\s*"[^"]+"\s*(->|;)' | sed 's/\[.*//' >&2 || true
    failed=1
  fi
done
# Paths written in place (`crate::node::Host`) are edges too; cargo-modules
# draws only `use` declarations.
python3 scripts/module_paths_cycles.py host/store/src host/runtime/src host/shim/src || failed=1
exit "$failed"
