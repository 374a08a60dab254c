#!/usr/bin/env bash
# Builds the test harness's wheel (wasmkeep_actor_harness, pyo3 over the host
# library) into target/wheels/ with maturin, in target/py-venv (run from
# anywhere; setup.sh and wheels.sh call it):
#
#   bash sdk-python/scripts/harness-wheel.sh [--profile dev|release]
#                                  # default: $WASMKEEP_PY_HARNESS_PROFILE, else dev
#
# One wheel for every CPython from 3.11 on Linux x86_64 with glibc 2.28 or
# newer: cp311-abi3-manylinux_2_28_x86_64 (ADR 065).
# - abi3: pyo3's abi3-py311 feature (harness/Cargo.toml), CPython's stable
#   ABI, so the same module loads in 3.11, 3.12, 3.13 and later.
# - manylinux_2_28: the module is linked (only the final link: every
#   dependency stays the workspace's ordinary build) by `zig cc` targeting
#   glibc 2.28, through maturin's own zig wrapper, with zig from PyPI's
#   `ziglang`. Linked by this machine's cc, the module needs the glibc it was
#   linked on (2.34 or newer here). maturin then checks the module against
#   manylinux_2_28 and tags the wheel so.
#
# Prints the wheel's path last. The linker wrapper it writes
# (target/py-venv/bin/wasmkeep-zig-cc) is also what `cargo xtask release`
# links the host binary with for the harness wheel.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
say() { echo "harness-wheel: [$(date +%T)] $*" >&2; }
die() { echo "harness-wheel: FAILED: $*" >&2; exit 1; }

profile="${WASMKEEP_PY_HARNESS_PROFILE:-dev}"
while (($#)); do
  case "$1" in
    --profile) [ $# -ge 2 ] || die "--profile needs dev or release"; profile=$2; shift 2 ;;
    *) die "unknown argument $1 (usage: harness-wheel.sh [--profile dev|release])" ;;
  esac
done

venv=$repo/target/py-venv
py=$venv/bin/python
[ -x "$venv/bin/maturin" ] || die "no maturin in target/py-venv: bash sdk-python/scripts/setup.sh"
# The glibc the wheel is for; the manylinux tag says the same.
glibc=2.28
arch=$(uname -m)
tag=manylinux_${glibc/./_}
# zig from PyPI (a registry package: no download of a toolchain of its own).
zig_version=0.17.1
if ! "$py" -c "import importlib.metadata as m, sys; sys.exit(m.version('ziglang') != '$zig_version')" 2>/dev/null; then
  say "pip install ziglang==$zig_version (the linker for glibc $glibc)"
  "$py" -m pip install -q --disable-pip-version-check "ziglang==$zig_version" >&2
fi
# rustc calls the wrapper as its linker; maturin's `zig cc` drops the
# arguments zig does not take (rust-lld's -fuse-ld, -lgcc_s) and runs
# `python3 -m ziglang`, the venv's.
# The unwinder: left to itself, zig links LLVM's libunwind into the module in
# place of libgcc_s. wasmtime registers each compiled module's unwind info
# with `__register_frame`; LLVM's libunwind keeps those entries in one flat
# array and walks all of it on every lookup and every removal, so a test
# host's reset (which drops and loads 18 MB components) spent most of its
# time there: account-py's chaos test ran 15 times slower (ADR 065,
# addendum). Naming the system's libgcc_s.so.1 links the unwinder
# dynamically, as an ordinary Rust link does; manylinux allows that library,
# and its symbol versions (GCC_3.0 to GCC_4.2.0) are far older than 2.28.
# This machine's libgcc_s.so.1 itself refers to newer glibc symbols
# (_dl_find_object@GLIBC_2.35), which the glibc 2.28 stubs lack: they are
# the system's business at run time (an older system's libgcc_s does not
# refer to them), so the link of an executable (the release's host binary)
# allows what the shared library leaves undefined.
libgcc_s=$(readlink -f "$(cc -print-file-name=libgcc_s.so.1)")
[ -f "$libgcc_s" ] || die "no libgcc_s.so.1 beside this machine's cc (cc -print-file-name=libgcc_s.so.1 says $libgcc_s): install gcc"
wrapper=$venv/bin/wasmkeep-zig-cc
cat >"$wrapper.tmp" <<EOF
#!/bin/sh
# Written by sdk-python/scripts/harness-wheel.sh: zig cc as a linker for glibc $glibc,
# with the system's unwinder (libgcc_s), not zig's libunwind.
PATH="$venv/bin:\$PATH" exec "$venv/bin/maturin" zig cc -- -target $arch-linux-gnu.$glibc "\$@" "$libgcc_s" -Wl,--allow-shlib-undefined
EOF
chmod 755 "$wrapper.tmp"
# cargo relinks when the linker's path changes, not its contents: a changed
# wrapper must relink the module itself.
if ! cmp -s "$wrapper.tmp" "$wrapper"; then
  touch sdk-python/harness/src/lib.rs
fi
mv "$wrapper.tmp" "$wrapper"

say "building the test harness (maturin, cargo $profile profile, abi3, $tag)"
mkdir -p target/wheels
rm -f target/wheels/wasmkeep_actor_harness-*.whl
log=$(mktemp)
if ! (cd sdk-python/harness && "$venv/bin/maturin" build --profile "$profile" -j 2 --compatibility "$tag" \
  --out "$repo/target/wheels" -- -C "linker=$wrapper" >"$log" 2>&1); then
  cat "$log" >&2; rm -f "$log"
  die "building the harness failed (maturin output above)"
fi
rm -f "$log"
wheel=$(ls target/wheels/wasmkeep_actor_harness-*.whl 2>/dev/null | head -1)
[ -n "$wheel" ] || die "maturin built no harness wheel into target/wheels/"
case "$(basename "$wheel")" in
  *-cp311-abi3-${tag}_$arch.whl) ;;
  *) die "the harness wheel is $(basename "$wheel"), not cp311-abi3-${tag}_$arch" ;;
esac
echo "$repo/$wheel"
