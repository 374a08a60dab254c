#!/usr/bin/env bash
# Generates the C harness's header from its Rust code (cbindgen, in
# sdk-c/harness/build.rs):
#   sdk-c/include/wasmkeep_harness.h
# The bindings of wit/ (sdk-c/gen/) are made by `cargo xtask gen` with the
# wit-bindgen library; this script does not make them.
#
#   bash sdk-c/scripts/gen.sh              rewrite the header in place (commit the result)
#   bash sdk-c/scripts/gen.sh --check      build it into a temporary directory and fail
#                                          if the committed one differs (exit 1)
# Exit status: 0 current (or written), 1 the header differs (--check), 2 bad
# arguments, 3 the harness build failed.
set -euo pipefail
cd "$(dirname "$0")/../.."

check=false
for arg in "$@"; do
  case "$arg" in
    --check) check=true ;;
    *) echo "gen.sh: unknown argument $arg (use --check, or nothing)" >&2; exit 2 ;;
  esac
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# build.rs writes the header where WASMKEEP_HARNESS_HEADER says.
WASMKEEP_HARNESS_HEADER="$tmp/wasmkeep_harness.h" \
  cargo build --quiet -p wasmkeep-c-harness || { echo "gen.sh: building sdk-c/harness failed" >&2; exit 3; }

if $check; then
  if ! cmp -s sdk-c/include/wasmkeep_harness.h "$tmp/wasmkeep_harness.h"; then
    echo "gen.sh: this C file differs from what sdk-c/harness makes:" >&2
    echo "  sdk-c/include/wasmkeep_harness.h" >&2
    echo "gen.sh: run \`bash sdk-c/scripts/gen.sh\` and commit the result" >&2
    exit 1
  fi
  echo "gen.sh: the harness header is current"
  exit 0
fi
cp "$tmp/wasmkeep_harness.h" sdk-c/include/wasmkeep_harness.h
echo "gen.sh: wrote sdk-c/include/wasmkeep_harness.h"
