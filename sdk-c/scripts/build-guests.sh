#!/usr/bin/env bash
# Builds the repository's C guests into target/components/ with the SDK's own
# Makefile fragment (each guest's Makefile includes sdk-c/mk/wasmkeep.mk):
#
#   bash sdk-c/scripts/build-guests.sh [--only <name>] [--quiet]
#
# A guest whose inputs (its sources, the SDK, the generated bindings, the
# adapter, the compiler's version) hash as at its last build is skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

# name -> directory holding its Makefile
declare -A GUESTS=(
  [conformance-testee-c]=conformance/testees/c
  [counter-c]=examples/counter-c
  [bank-c]=examples/bank-c
  # Its deliberately wrong variant (the same Makefile: `make broken`).
  [bank-c-broken]=examples/bank-c
  # The SDK's own test guest: mistakes it must catch (tests/misuse).
  [sdk-c-misuse]=sdk-c/tests/misuse
)

only=() quiet=false
while (($#)); do
  case "$1" in
    --only) only+=("$2"); shift 2 ;;
    --quiet) quiet=true; shift ;;
    *) echo "build-guests.sh: unknown argument $1 (use --only <name>, --quiet)" >&2; exit 2 ;;
  esac
done
((${#only[@]})) || only=("${!GUESTS[@]}")

# The adapter's bytes come from the crate registry (pinned by Cargo.lock),
# written by xtask: this script, a leaf, only checks it.
if [ ! -s sdk-c/lib/wasi_snapshot_preview1.reactor.wasm ]; then
  echo "build-guests.sh: sdk-c/lib/wasi_snapshot_preview1.reactor.wasm is missing: run \`cargo xtask c-adapter sdk-c/lib/wasi_snapshot_preview1.reactor.wasm\` (cargo xtask setup does), then this again" >&2
  exit 1
fi

out=target/components cache=target/wasmkeep-c-cache
mkdir -p "$out" "$cache"
say() { $quiet || echo "build-guests.sh: $*"; }

# The inputs' content hash: every file's path and bytes, plus the tools' versions.
inputs_hash() {
  local dir=$1
  {
    find "$dir" sdk-c/include sdk-c/src sdk-c/gen sdk-c/mk sdk-c/lib -type f \
      ! -name '*.wasm' ! -path '*/build/*' -print0 | sort -z | xargs -0 sha256sum
    sha256sum sdk-c/lib/wasi_snapshot_preview1.reactor.wasm
    clang --version | head -1
    wasm-tools --version
  } | sha256sum | cut -d' ' -f1
}

for name in "${only[@]}"; do
  dir=${GUESTS[$name]:-}
  if [ -z "$dir" ]; then echo "build-guests.sh: unknown guest $name (known: ${!GUESTS[*]})" >&2; exit 2; fi
  [ -f "$dir/Makefile" ] || { say "skipping $name: $dir/Makefile is missing"; continue; }
  hash=$(inputs_hash "$dir")
  if [ -f "$out/$name.wasm" ] && [ "$(cat "$cache/$name.sha256" 2>/dev/null)" = "$hash" ]; then
    say "$name: unchanged (inputs hash ${hash:0:12})"
    continue
  fi
  start=$(date +%s%N)
  rm -f "$out/$name.wasm" "target/wasmkeep-c/$name/$name.core.wasm"
  make -s -C "$dir" WASMKEEP_C_SDK="$root/sdk-c" WK_OUT="$root/$out" WK_BUILD="$root/target/wasmkeep-c/$name" \
    "$root/$out/$name.wasm" >/dev/null
  echo "$hash" > "$cache/$name.sha256"
  say "$name: built $out/$name.wasm ($(stat -c %s "$out/$name.wasm") bytes, $(( ($(date +%s%N) - start) / 1000000 )) ms)"
done
