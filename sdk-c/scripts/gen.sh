#!/usr/bin/env bash
# Generates what the C SDK does not write by hand, from the sources of truth:
#   sdk-c/gen/actor.{c,h}, actor_component_type.o   `wit-bindgen c` of wit/ (world actor)
#   sdk-c/include/wasmkeep_harness.h                 cbindgen of sdk-c/harness (its build.rs)
#
#   bash sdk-c/scripts/gen.sh              regenerate both in place (commit the result)
#   bash sdk-c/scripts/gen.sh --check      regenerate into a temporary directory and
#                                          fail naming every file that differs (exit 1)
#   --wit-only (with or without --check)   only sdk-c/gen/, what wit/ makes: no cargo
#                                          build of the harness (it builds wasmtime).
#                                          `cargo xtask gen` runs this; the header is
#                                          checked by `cargo test -p wasmkeep-c-harness`.
# Exit status: 0 current (or written), 1 files differ (--check), 2 bad
# arguments, 3 a tool is missing or failed.
set -euo pipefail
cd "$(dirname "$0")/../.."
WIT_BINDGEN_VERSION=0.63.0
# What to tell the reader to run (cargo xtask gen sets its own command).
regen="${WASMKEEP_GEN_COMMAND:-bash sdk-c/scripts/gen.sh}"

check=false wit_only=false
for arg in "$@"; do
  case "$arg" in
    --check) check=true ;;
    --wit-only) wit_only=true ;;
    *) echo "gen.sh: unknown argument $arg (use --check and/or --wit-only)" >&2; exit 2 ;;
  esac
done

have=$(wit-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [ "$have" != "$WIT_BINDGEN_VERSION" ]; then
  echo "gen.sh: the tool wit-bindgen $WIT_BINDGEN_VERSION is needed (found: ${have:-none});" \
       "bash sdk-c/scripts/setup.sh installs it (run by scripts/setup.sh), or:" \
       "cargo install --locked wit-bindgen-cli --version $WIT_BINDGEN_VERSION" >&2
  exit 3
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/gen" "$tmp/include"
wit-bindgen c wit --world actor --out-dir "$tmp/gen" >"$tmp/wit-bindgen.log" 2>&1 || {
  cat "$tmp/wit-bindgen.log" >&2; echo "gen.sh: wit-bindgen c failed on wit/" >&2; exit 3
}
if ! $wit_only; then
  # The harness header: build.rs writes it where WASMKEEP_HARNESS_HEADER says.
  WASMKEEP_HARNESS_HEADER="$tmp/include/wasmkeep_harness.h" \
    cargo build --quiet -p wasmkeep-c-harness || { echo "gen.sh: building sdk-c/harness failed" >&2; exit 3; }
fi

# Prints every file of the committed directory $2 that differs from the fresh
# one $1: changed, missing, or not generated any more.
stale_files() {
  { (cd "$1" && find . -type f); if [ -d "$2" ]; then (cd "$2" && find . -type f); fi; } |
    sort -u | while read -r f; do cmp -s "$1/$f" "$2/$f" || echo "$2/${f#./}"; done
}

if $check; then
  stale=$(stale_files "$tmp/gen" sdk-c/gen)
  made="wit/"; $wit_only || made="wit/ and sdk-c/harness"
  if ! $wit_only && ! cmp -s sdk-c/include/wasmkeep_harness.h "$tmp/include/wasmkeep_harness.h"; then
    stale+="${stale:+$'\n'}sdk-c/include/wasmkeep_harness.h"
  fi
  if [ -n "$stale" ]; then
    echo "gen.sh: these C files differ from what $made makes:" >&2
    sed 's/^/  /' <<<"$stale" >&2
    echo "gen.sh: run \`$regen\` and commit the result" >&2
    exit 1
  fi
  if $wit_only; then echo "gen.sh: sdk-c/gen is current"
  else echo "gen.sh: sdk-c/gen and the harness header are current"; fi
  exit 0
fi
rm -rf sdk-c/gen && cp -r "$tmp/gen" sdk-c/gen
if $wit_only; then
  echo "gen.sh: wrote sdk-c/gen/ (wit-bindgen $WIT_BINDGEN_VERSION)"
else
  cp "$tmp/include/wasmkeep_harness.h" sdk-c/include/wasmkeep_harness.h
  echo "gen.sh: wrote sdk-c/gen/ (wit-bindgen $WIT_BINDGEN_VERSION) and sdk-c/include/wasmkeep_harness.h"
fi
