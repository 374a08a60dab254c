#!/usr/bin/env bash
# The C SDK's tests: generated files current, the guests built, the harness's
# C tests and the counter's test (plain, then under valgrind: no leak, no
# error), and the C column of the conformance matrix while the shared
# languages.toml has none. Run from anywhere: bash sdk-c/scripts/test.sh
# The counter's test under valgrind (one core: valgrind runs a program's
# threads one at a time) starts as soon as the test programs are built and
# runs beside the other tests (about one core too); its output is shown,
# whole, at the end (ADR 088).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
step() { echo; echo "==> C: $*"; }

step "the harness header matches the harness (sdk-c/scripts/gen.sh --check; gen/ is checked by cargo xtask gen --check)"
bash sdk-c/scripts/gen.sh --check

step "guests (sdk-c/scripts/build-guests.sh)"
bash sdk-c/scripts/build-guests.sh
# wasmkeep.mk's WK_INITIAL_MEMORY: an instance starts with 17 pages, so a woken
# actor's first events do not grow its memory (ADR 042, addendum of 2026-12-06).
# awk reads all of the text: a grep that stopped at its first match would end
# wasm-tools with SIGPIPE, which pipefail makes a failure.
pages_of() { wasm-tools print "$1" | awk '!n && /\(memory \(;0;\)/ { n = $3; sub(/\).*/, "", n) } END { print n }'; }
starts_with_17_pages() {
  local pages
  pages=$(pages_of "$1")
  [ "$pages" = 17 ] || { echo "$1 starts with $pages pages of memory, not 17 ($2)" >&2; exit 1; }
}
starts_with_17_pages target/components/counter-c.wasm "wasmkeep.mk's WK_INITIAL_MEMORY"
# The three build routes each carry the default; make's and pkg-config's are
# built here, CMake's actor function is not, so the three literals are compared.
mk_memory=$(sed -n 's/^WK_INITIAL_MEMORY ?= //p' sdk-c/mk/wasmkeep.mk)
cmake_memory=$(sed -n 's/^set(WK_INITIAL_MEMORY "\([0-9]*\)".*/\1/p' sdk-c/cmake/wasmkeep.cmake)
pc_memory=$(sed -n 's/^initial_memory=//p' sdk-c/pkgconfig/wasmkeep.pc.in)
[ -n "$mk_memory" ] && [ "$mk_memory" = "$cmake_memory" ] && [ "$mk_memory" = "$pc_memory" ] ||
  { echo "the default initial memory differs: wasmkeep.mk '$mk_memory', wasmkeep.cmake '$cmake_memory', wasmkeep.pc.in '$pc_memory': set the three alike" >&2; exit 1; }

step "wasmkeep.mk tracks headers: a changed header builds the component again (sdk-c/tests/header-deps.sh)"
bash sdk-c/tests/header-deps.sh

step "the harness library and the C test programs (cc)"
cargo build --quiet -p wasmkeep-c-harness
out=target/wasmkeep-c/tests
mkdir -p "$out"
cflags=(-std=c11 -Wall -Wextra -Werror -g -Isdk-c/include)
ldflags=(-Ltarget/debug -lwasmkeep_c_harness "-Wl,-rpath,$root/target/debug")
cc "${cflags[@]}" -o "$out/harness_test" sdk-c/tests/harness_test.c "${ldflags[@]}"
cc "${cflags[@]}" -o "$out/counter_test" examples/counter-c/test/counter_test.c "${ldflags[@]}"
cc "${cflags[@]}" -o "$out/bank_test" examples/bank-c/test/bank_test.c "${ldflags[@]}"
cc "${cflags[@]}" -o "$out/replay_test" sdk-c/tests/replay_test.c "${ldflags[@]}"
cargo build --quiet -p wasmkeep-shim   # the new-user trial serves with target/debug/wasmkeep-shim

# Compiled components are cached by content hash here (shared with the runner).
export WASMKEEP_CACHE_DIR="$root/target/wasmkeep-cache"
testee=target/components/conformance-testee-c.wasm counter=target/components/counter-c.wasm

# The same under valgrind (leak check; suppressions: sdk-c/tests/valgrind.supp):
# the counter's test (the longer) in the background from here, its output
# into a file shown at the end; the harness test's after the other steps.
# Definite leaks fail the step. "Possibly lost" blocks do not: the process
# may exit while one of a host's threads still ends (a worker, a timer) and
# holds a reference into it, and then a whole host's tables read as
# possibly lost (124 records in one loaded run, none when run again alone).
# Two suppressions chased single cases of it.
vg=(valgrind -q --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite
    --error-exitcode=1 --suppressions=sdk-c/tests/valgrind.supp)
vg_log=$(mktemp "${TMPDIR:-/tmp}/wasmkeep-c-valgrind-XXXXXX")
vg_pid=
# A step that fails ends the script: the valgrind run (the subshell's child,
# then the subshell) is stopped by its PID.
stop_valgrind() {
  if [ -n "$vg_pid" ]; then
    pkill -TERM -P "$vg_pid" 2>/dev/null || true
    kill "$vg_pid" 2>/dev/null || true
    wait "$vg_pid" 2>/dev/null || true
  fi
  rm -f "$vg_log"
}
trap stop_valgrind EXIT
(
  set -e
  vg_began=$(date +%s)
  # 20 chaos seeds are enough for the leak check (1000 under valgrind would take long).
  WASMKEEP_CHAOS_SEEDS=20 "${vg[@]}" "$out/counter_test" "$counter"
  echo "valgrind: counter_test passed in $(($(date +%s) - vg_began)) s"
) >"$vg_log" 2>&1 &
vg_pid=$!

step "harness and counter tests (the counter's chaos test: 1000 seeds)"
"$out/harness_test" "$testee"
"$out/counter_test" "$counter"
step "the bank: its rules, chaos on one node and two, the broken variant caught and replayed (examples/bank-c)"
"$out/bank_test" target/components/bank-c.wasm target/components/bank-c-broken.wasm
step "a chaos seed replays exactly on two nodes: 100 seeds of the bank, twice, each seed's schedule and answers compared (sdk-c/tests/replay_test.c)"
"$out/replay_test" target/components/bank-c.wasm

step "mistakes the SDK catches (sdk-c/tests/misuse)"
# A string where the parameter array belongs does not compile (a warning and a NULL before);
# every correct way does, without a warning.
m=sdk-c/tests/misuse
for compiler in cc clang; do
  "$compiler" -std=c11 -Wall -Wextra -Werror -fsyntax-only -Isdk-c/include "$m/params_ok.c"
  if log=$("$compiler" -std=c11 -fsyntax-only -Isdk-c/include "$m/params_char_ptr.c" 2>&1); then
    echo "$compiler compiled $m/params_char_ptr.c: a char * passed as the parameter array must not compile" >&2; exit 1
  fi
  grep -q wk_params_must_be_a_wk_value_array_or_NULL <<<"$log" || { echo "$log" >&2; echo "the error does not name the rule" >&2; exit 1; }
done
# WASMKEEP_C_SDK unset or wrong: the Makefile's own message, not make's "No such file".
for dir in examples/counter-c "$m"; do
  for bad in "" /nonexistent; do
    if log=$(make -s -n -C "$dir" WASMKEEP_C_SDK="$bad" 2>&1); then echo "make in $dir with WASMKEEP_C_SDK='$bad' did not fail" >&2; exit 1; fi
    grep -q "is not the C SDK's directory: set it to sdk-c" <<<"$log" || { echo "$log" >&2; exit 1; }
  done
done
cc "${cflags[@]}" -o "$out/misuse_test" "$m/misuse_test.c" "${ldflags[@]}"
"$out/misuse_test" target/components/sdk-c-misuse.wasm

step "the pkg-config route (README, section 3): every SDK source listed, and the bank (it uses wk_request_query) built with it"
pc=sdk-c/lib/pkgconfig/wasmkeep.pc
for src in sdk-c/src/*.c; do
  grep -q "/src/$(basename "$src")\b" "$pc" || { echo "$pc (from sdk-c/pkgconfig/wasmkeep.pc.in): sources lack src/$(basename "$src"), so a program that uses it does not link" >&2; exit 1; }
done
pc_out=target/wasmkeep-c/pkg-config
mkdir -p "$pc_out"
(
  export PKG_CONFIG_PATH="$root/sdk-c/lib/pkgconfig"
  # shellcheck disable=SC2046 # pkg-config's words are meant to split
  clang $(pkg-config --cflags wasmkeep) -O2 -o "$pc_out/bank.core.wasm" examples/bank-c/actor.c \
    $(pkg-config --variable=sources wasmkeep) $(pkg-config --libs wasmkeep)
  wasm-tools component new "$pc_out/bank.core.wasm" \
    --adapt "wasi_snapshot_preview1=$(pkg-config --variable=adapter wasmkeep)" -o "$pc_out/bank.wasm"
)
starts_with_17_pages "$pc_out/bank.wasm" "wasmkeep.pc's initial_memory"
"$out/bank_test" "$pc_out/bank.wasm" target/components/bank-c-broken.wasm

step "the new-user trial: install into a prefix, build, test and serve from it alone (sdk-c/scripts/new-user-trial.sh)"
bash sdk-c/scripts/new-user-trial.sh

step "the harness test under valgrind, then the counter's, which ran beside the steps above (leak check; suppressions: sdk-c/tests/valgrind.supp)"
"${vg[@]}" "$out/harness_test" "$testee"
vg_status=0
wait "$vg_pid" || vg_status=$?
vg_pid=
cat "$vg_log"
[ "$vg_status" = 0 ] || { echo "valgrind: counter_test failed (exit $vg_status; its whole output is above)" >&2; exit 1; }
