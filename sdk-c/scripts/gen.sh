#!/usr/bin/env bash
# Generates what the C SDK does not write by hand, from the sources of truth:
#   sdk-c/gen/actor.{c,h}, actor_component_type.o   `wit-bindgen c` of wit/ (world actor)
#   sdk-c/include/wasmkeep_harness.h                 cbindgen of sdk-c/harness (its build.rs)
#
#   bash sdk-c/scripts/gen.sh           regenerate in place (commit the result)
#   bash sdk-c/scripts/gen.sh --check   regenerate into a temporary directory and
#                                       fail if anything differs (CI runs this)
set -euo pipefail
cd "$(dirname "$0")/../.."
WIT_BINDGEN_VERSION=0.63.0

check=false
case "${1:-}" in
  --check) check=true ;;
  "") ;;
  *) echo "gen.sh: unknown argument $1 (use --check or nothing)" >&2; exit 2 ;;
esac

have=$(wit-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [ "$have" != "$WIT_BINDGEN_VERSION" ]; then
  echo "gen.sh: wit-bindgen $WIT_BINDGEN_VERSION is needed (found: ${have:-none});" \
       "install it with: cargo install --locked wit-bindgen-cli --version $WIT_BINDGEN_VERSION" \
       "(or run bash sdk-c/scripts/setup.sh)" >&2
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/gen" "$tmp/include"
wit-bindgen c wit --world actor --out-dir "$tmp/gen" >"$tmp/wit-bindgen.log" 2>&1 || {
  cat "$tmp/wit-bindgen.log" >&2; echo "gen.sh: wit-bindgen c failed on wit/" >&2; exit 1
}
# The harness header: build.rs writes it where WASMKEEP_HARNESS_HEADER says.
WASMKEEP_HARNESS_HEADER="$tmp/include/wasmkeep_harness.h" \
  cargo build --quiet -p wasmkeep-c-harness

if $check; then
  status=0
  diff -r sdk-c/gen "$tmp/gen" >/dev/null || {
    echo "gen.sh: sdk-c/gen/ is stale against wit/: run \`bash sdk-c/scripts/gen.sh\` and commit it" >&2
    diff -r sdk-c/gen "$tmp/gen" | head -20 >&2 || true
    status=1
  }
  cmp -s sdk-c/include/wasmkeep_harness.h "$tmp/include/wasmkeep_harness.h" || {
    echo "gen.sh: sdk-c/include/wasmkeep_harness.h is stale against sdk-c/harness: run \`bash sdk-c/scripts/gen.sh\` and commit it" >&2
    status=1
  }
  [ $status = 0 ] && echo "gen.sh: sdk-c/gen and the harness header are current"
  exit $status
fi
rm -rf sdk-c/gen && cp -r "$tmp/gen" sdk-c/gen
cp "$tmp/include/wasmkeep_harness.h" sdk-c/include/wasmkeep_harness.h
echo "gen.sh: wrote sdk-c/gen/ (wit-bindgen $WIT_BINDGEN_VERSION) and sdk-c/include/wasmkeep_harness.h"
