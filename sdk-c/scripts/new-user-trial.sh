#!/usr/bin/env bash
# The C new-user trial (issue "from nothing to a running actor in minutes",
# item 4): install the SDK into a temporary prefix, and in an empty folder
# build and test the counter with only that prefix, as someone without this
# repository would:
#   1. make -C sdk-c install PREFIX=<tmp>/prefix (nothing installed names the checkout)
#   2. a project folder: examples/counter-c's actor.c and test/counter_test.c, and a
#      Makefile that uses the prefix only (its wasmkeep.mk; pkg-config for the test)
#   3. make (the component), make test (the harness test)
#   4. again with the checkout hidden (unshare -m and a tmpfs over it), where allowed
#   5. the same test built with CMake (find_package(wasmkeep), wasmkeep::harness),
#      when cmake is installed
#   6. target/debug/wasmkeep-shim serve on 127.0.0.1:0: POST /counter/c1 answers 1
# One line per step with its time; a failing step says which, with its output.
#
#   bash sdk-c/scripts/new-user-trial.sh [--keep]
#
# Needs what `bash sdk-c/scripts/setup.sh` and `cargo build -p wasmkeep-c-harness
# -p wasmkeep-shim` made (this script runs no cargo). The harness library is
# hard-linked into the prefix (WK_INSTALL_LINK=1): the debug build is about
# 1.2 GB, and a hard link is a file of its own once the checkout is gone.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
keep=false
[ "${1:-}" = --keep ] && keep=true

say() { echo "new-user trial (C): $*"; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wasmkeep-c-new-user-XXXXXX")
server=
cleanup() {
  if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  if $keep; then say "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

# step NAME CMD...: runs CMD with its output in a log; one line with the time;
# on failure, the step's name and its log.
step() {
  local what=$1; shift
  local log="$tmp/step.log" t0 t1 rc=0
  t0=$(date +%s.%N)
  "$@" >"$log" 2>&1 || rc=$?
  t1=$(date +%s.%N)
  local secs; secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  if [ "$rc" != 0 ]; then
    cat "$log" >&2
    say "FAILED at \"$what\" (exit $rc, $secs s)" >&2
    exit 1
  fi
  say "$what: ok ($secs s)"
}

prefix="$tmp/prefix" project="$tmp/project"
shim="$root/target/debug/wasmkeep-shim"
for need in target/debug/libwasmkeep_c_harness.so target/debug/libwasmkeep_c_harness.a "$shim"; do
  [ -e "$need" ] || { say "FAILED: $need is missing: cargo build -p wasmkeep-c-harness -p wasmkeep-shim" >&2; exit 1; }
done
say "in $tmp"

step "make -C sdk-c install PREFIX=<tmp>/prefix" \
  make -C sdk-c install PREFIX="$prefix" WK_INSTALL_LINK=1

# Nothing installed names the checkout: no text file, and no binary's dynamic
# section (its debug info and panic messages name the build's sources, which is
# not a dependency on them).
no_checkout_paths() {
  local hits
  hits=$(grep -rIl -F "$root" "$prefix" || true)
  [ -z "$hits" ] || { echo "these installed files name the checkout $root:"; echo "$hits"; return 1; }
  if readelf -d "$prefix/lib/libwasmkeep_c_harness.so" | grep -F "$root"; then
    echo "the harness library's dynamic section names the checkout"; return 1
  fi
}
step "nothing installed names the checkout" no_checkout_paths

# The project: the example's files, and a Makefile that knows only the prefix.
mkdir -p "$project/test"
cp examples/counter-c/actor.c "$project/"
cp examples/counter-c/test/counter_test.c "$project/test/"
cat >"$project/Makefile" <<EOF
# Built with the wasmkeep C SDK installed in a prefix.
WASMKEEP_PREFIX ?= $prefix
WASMKEEP_C_SDK := \$(WASMKEEP_PREFIX)/share/wasmkeep
WK_NAME := counter
WK_SRCS := actor.c
include \$(or \$(wildcard \$(WASMKEEP_C_SDK)/mk/wasmkeep.mk),\$(error \$(WASMKEEP_C_SDK)/mk/wasmkeep.mk is missing: make -C sdk-c install PREFIX=\$(WASMKEEP_PREFIX)))

# The test program is native: the harness through pkg-config.
PKG_CONFIG := PKG_CONFIG_PATH=\$(WASMKEEP_PREFIX)/lib/pkgconfig pkg-config

build/counter_test: test/counter_test.c
	@mkdir -p build
	cc -std=c11 -Wall -Wextra -Werror -g -o \$@ \$< \$\$(\$(PKG_CONFIG) --cflags --libs wasmkeep-harness)

.PHONY: test
test: build/counter_test \$(WK_COMPONENT)
	./build/counter_test \$(WK_COMPONENT)
EOF
grep -qF "$root" "$project/Makefile" && { say "FAILED: the project's Makefile names the checkout" >&2; exit 1; }
say "project: actor.c, test/counter_test.c and a Makefile in $project"

# No variable of this shell may lead the builds (or the loader) back to the checkout.
unset WASMKEEP_C_SDK WASMKEEP_TARGET PKG_CONFIG_PATH LD_LIBRARY_PATH CMAKE_PREFIX_PATH
# The trial checks building and running from the prefix: 20 of the counter's
# chaos seeds do that (test.sh runs all 1000 once).
export WASMKEEP_CHAOS_SEEDS=20
step "make (the component, with the prefix's wasmkeep.mk)" make -C "$project"
step "make test (pkg-config wasmkeep-harness; the harness test)" make -C "$project" test
# The test program finds the library in the prefix (its rpath), not in target/.
finds_prefix_lib() {
  # ldd's output read whole first: `ldd | grep -q` under pipefail fails when
  # grep stops reading early and ldd dies of SIGPIPE (a flaky failure).
  local libs
  libs=$(ldd "$project/build/counter_test")
  grep libwasmkeep_c_harness <<<"$libs"
  grep -qF "=> $prefix/lib/libwasmkeep_c_harness.so" <<<"$libs"
}
step "the test program loads the prefix's libwasmkeep_c_harness.so" finds_prefix_lib

# The strongest check: build and test again with the checkout hidden (an
# empty tmpfs over it, in a mount namespace of this step only), where that is
# allowed (root, or user namespaces).
hidden_checkout_build() {
  rm -rf "$project/build" "$project/counter.wasm"
  unshare -m --propagation private bash -c \
    'mount -t tmpfs none "$1" && [ -z "$(ls -A "$1")" ] && make -C "$2" test' _ "$root" "$project"
}
if unshare -m --propagation private true 2>/dev/null; then
  step "make && make test again with the checkout hidden (unshare -m, tmpfs over it)" hidden_checkout_build
else
  say "the build with the checkout hidden: skipped (unshare -m is not allowed here)"
fi

if command -v cmake >/dev/null 2>&1; then
  mkdir -p "$project/cmake-test"
  cat >"$project/cmake-test/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(counter_test LANGUAGES C)
find_package(wasmkeep 0.2 REQUIRED CONFIG)
add_executable(counter_test ../test/counter_test.c)
target_link_libraries(counter_test PRIVATE wasmkeep::harness)
EOF
  step "cmake configure (find_package(wasmkeep), CMAKE_PREFIX_PATH=<prefix>)" \
    cmake -S "$project/cmake-test" -B "$project/cmake-build" -DCMAKE_PREFIX_PATH="$prefix"
  step "cmake --build (wasmkeep::harness)" cmake --build "$project/cmake-build"
  step "the CMake-built test" "$project/cmake-build/counter_test" "$project/counter.wasm"
else
  say "cmake: skipped (cmake is not installed)"
fi

# Serve the component; one POST; stop only the server started here.
cat >"$project/wasmkeep.toml" <<'EOF'
app = "me/counter"

[classes.counter]
component = "counter.wasm"   # relative to this file
access = "open"
EOF
serve_and_post() {
  local out="$tmp/serve.out" url="" answer i
  "$shim" serve --manifest "$project/wasmkeep.toml" --listen 127.0.0.1:0 --data-dir "$tmp/data" >"$out" 2>&1 &
  server=$!
  for ((i = 0; i < 1200; i++)); do
    url=$(sed -n 's|^listening on \(http://127\.0\.0\.1:[0-9]*\).*|\1|p' "$out" | head -1)
    [ -n "$url" ] && break
    kill -0 "$server" 2>/dev/null || { echo "serve exited:"; cat "$out"; return 1; }
    sleep 0.1
  done
  [ -n "$url" ] || { echo "no \"listening on\" line in 120 s:"; cat "$out"; return 1; }
  answer=$(curl -sS --max-time 60 -X POST "$url/counter/c1")
  echo "POST $url/counter/c1 -> $answer"
  [ "$answer" = 1 ] || { echo "expected 1; the server said:"; cat "$out"; return 1; }
}
stop_server() {
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  server=
}
# Not through step (a function's redirect runs in this shell, so $server stays
# here for stop_server and the exit trap).
t0=$(date +%s.%N)
if ! serve_and_post >"$tmp/serve.log" 2>&1; then
  cat "$tmp/serve.log" >&2
  say "FAILED at \"wasmkeep-shim serve, POST /counter/c1\"" >&2
  exit 1
fi
pid=$server
stop_server
t1=$(date +%s.%N)
say "wasmkeep-shim serve, POST /counter/c1 answers 1: ok ($(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s; server pid $pid stopped)"
say "passed"
