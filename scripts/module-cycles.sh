#!/usr/bin/env bash
# Fails when a host crate's modules refer to each other in a cycle (issue:
# the host as layers). scripts/module_cycles.py reads each module's source
# for the modules it names (`use` declarations, grouped ones included, and
# paths written in place); it needs no build and nothing to install, where
# cargo-modules took minutes to install on a fresh machine. It is checked on
# a small crate with two cycles first, so a checker that finds nothing
# cannot pass by accident.
set -euo pipefail
cd "$(dirname "$0")/.."
fixture=$(mktemp -d)
trap 'rm -rf "$fixture"' EXIT
mkdir -p "$fixture/src/store"
echo 'use crate::{b::Thing, c};' >"$fixture/src/a.rs"
echo 'pub fn f() { crate::a::g(); }' >"$fixture/src/b.rs"
: >"$fixture/src/c.rs"
echo 'mod holding; mod open;' >"$fixture/src/store/mod.rs"
echo 'use super::{holding::Holding};' >"$fixture/src/store/open.rs"
echo 'use crate::store::open::Open;' >"$fixture/src/store/holding.rs"
if found=$(python3 scripts/module_cycles.py "$fixture/src" 2>&1); then
  echo "module-cycles: the checker found no cycle in a crate that has two:" >&2
  echo "$found" >&2
  exit 1
fi
grep -q "a <-> b" <<<"$found" && grep -q "store::holding <-> store::open" <<<"$found" || {
  echo "module-cycles: the checker missed a cycle of the fixture:" >&2
  echo "$found" >&2
  exit 1
}
python3 scripts/module_cycles.py host/store/src host/runtime/src host/shim/src
# Every arrow docs/architecture.md draws exists in the code; checked first on
# a drawing with an arrow its code lacks, so a reader that sees no arrow
# cannot pass by accident.
drawn=$(mktemp -d)
trap 'rm -rf "$fixture" "$drawn"' EXIT
mkdir -p "$drawn/docs" "$drawn/host/runtime/src"
printf '# x\n\n```text\n  host/runtime   │ alpha ─► beta │\n```\n' >"$drawn/docs/architecture.md"
echo 'use crate::gamma::G;' >"$drawn/host/runtime/src/alpha.rs"
: >"$drawn/host/runtime/src/beta.rs"
: >"$drawn/host/runtime/src/gamma.rs"
if found=$(python3 scripts/architecture_arrows.py "$drawn" 2>&1) || ! grep -q "alpha ─► beta" <<<"$found"; then
  echo "architecture-arrows: the checker passed a drawing whose arrow alpha ─► beta the code lacks:" >&2
  echo "$found" >&2
  exit 1
fi
python3 scripts/architecture_arrows.py
