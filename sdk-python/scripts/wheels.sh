#!/usr/bin/env bash
# The Python SDK's two wheels, to install in a project of one's own with no
# Rust and no checkout (run from anywhere):
#
#   bash sdk-python/scripts/wheels.sh [--out DIR] [--shim PATH] [--sdist]
#                                           # DIR's default: target/python-dist
#
# - wasmkeep_actor-<v>-py3-none-any.whl: the SDK, pure Python, built by
#   setuptools (pip wheel --no-deps --no-build-isolation, in target/py-venv)
#   from a clean copy of the package, so that no build/ leftovers, caches or
#   compiled files get in; its contents are then checked.
# - wasmkeep_actor_harness-<v>-cp311-abi3-manylinux_2_28_x86_64.whl: the
#   test harness with its native module prebuilt, the one setup.sh built
#   with maturin into target/wheels/ (copied; built here the same way, by
#   harness-wheel.sh, only when it is missing): one wheel for every CPython
#   from 3.11 on Linux x86_64 with glibc 2.28 or newer (ADR 065).
#   With --shim, it carries that host binary as its `wasmkeep-shim` script
#   (<name>.data/scripts/, as ruff's and maturin's `bin` wheels do), so
#   `pip install "wasmkeep-actor[testing]"` brings the host too (ADR 032);
#   twine checks its metadata. Either way auditwheel checks its tag, and
#   pip's dry runs that it installs on CPython 3.11 to 3.14, not on 3.10.
# - with --sdist, also the SDK's sdist (wasmkeep_actor-<v>.tar.gz).
#
# Prints the two wheels' paths, one a line, last.
set -euo pipefail
here=$PWD
cd "$(dirname "$0")/../.."
repo=$PWD
say() { echo "wheels: $*" >&2; }
die() { echo "wheels: FAILED: $*" >&2; exit 1; }

out=
shim=
sdist=false
while (($#)); do
  case "$1" in
    --shim) [ $# -ge 2 ] || die "--shim needs a path"; shim=$(realpath "$2"); shift 2 ;;
    --sdist) sdist=true; shift ;;
    --out) [ $# -ge 2 ] || die "--out needs a folder"; out=$2; shift 2 ;;
    --out=*) out=${1#--out=}; shift ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1 (usage: wheels.sh [--out DIR])" ;;
  esac
done
# --out is relative to the folder the command runs from; the default to the repository.
case "$out" in "") out=$repo/target/python-dist ;; /*) ;; *) out=$here/$out ;; esac
mkdir -p "$out"
out=$(cd "$out" && pwd)

venv=target/py-venv
py=$repo/$venv/bin/python
[ -x "$py" ] || bash sdk-python/scripts/setup.sh >&2
pip=("$py" -m pip --disable-pip-version-check)

# pyproject.toml's SPDX `license` needs setuptools 77 or newer; the venv's own
# is what builds, without an isolated environment (setup.sh installs it; an
# older venv gets it here, once).
if ! "$py" -c "import setuptools, sys; sys.exit(0 if int(setuptools.__version__.split('.')[0]) >= 77 else 1)" 2>/dev/null; then
  say "pip install setuptools>=77 into $venv (the SDK's build backend)"
  "${pip[@]}" install -q "setuptools>=77" >&2
fi

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' sdk-python/pyproject.toml | head -1)
[ -n "$version" ] || die "no version in sdk-python/pyproject.toml"

# The SDK. Staged: the package folder without caches or compiled files, the
# pyproject and the README (the wheel's description); never tests/, scripts/,
# harness/ or an *.egg-info from an editable install.
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/src" "$stage/out"
cp sdk-python/pyproject.toml sdk-python/README.md "$stage/src/"
(cd sdk-python && tar --exclude=__pycache__ --exclude='*.pyc' --exclude='*.so' --exclude='*.egg-info' -cf - wasmkeep_actor) | tar -xf - -C "$stage/src"
log=$stage/pip.log
if ! "${pip[@]}" wheel -q --no-deps --no-build-isolation -w "$stage/out" "$stage/src" >"$log" 2>&1; then
  cat "$log" >&2
  die "pip wheel of sdk-python failed (its output above)"
fi
sdk=$(ls "$stage"/out/wasmkeep_actor-"$version"-py3-none-any.whl 2>/dev/null | head -1)
[ -n "$sdk" ] || die "pip wheel wrote no wasmkeep_actor-$version-py3-none-any.whl (it wrote: $(ls "$stage/out"))"

# What the SDK wheel holds: the package's files, exactly those of the source
# folder (less caches), and its dist-info; the pytest plugin's entry point.
"$py" - "$sdk" "$repo/sdk-python/wasmkeep_actor" "$version" <<'EOF' || die "the SDK wheel's contents are wrong (above)"
import pathlib, sys, zipfile
whl, src, version = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3]
names = zipfile.ZipFile(whl).namelist()
info = f"wasmkeep_actor-{version}.dist-info/"
want = {
    "wasmkeep_actor/" + p.relative_to(src).as_posix()
    for p in src.rglob("*")
    if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".so")
}
have = {n for n in names if not n.startswith(info)}
bad = []
if have - want:
    bad.append(f"files that are not the package's: {sorted(have - want)}")
if want - have:
    bad.append(f"package files missing: {sorted(want - have)}")
for need in ("wasmkeep_actor/py.typed", "wasmkeep_actor/wit/actor.wit", "wasmkeep_actor/pytest_plugin.py"):
    if need not in names:
        bad.append(f"missing {need}")
eps = zipfile.ZipFile(whl).read(info + "entry_points.txt").decode()
if "wasmkeep = wasmkeep_actor.pytest_plugin" not in eps:
    bad.append(f"no pytest11 entry point in entry_points.txt:\n{eps}")
if bad:
    print("\n".join(bad), file=sys.stderr)
    sys.exit(1)
EOF

# The harness: setup.sh's wheel, or the same build when there is none.
harness=$(ls target/wheels/wasmkeep_actor_harness-"$version"-*.whl 2>/dev/null | head -1 || true)
if [ -z "$harness" ]; then
  say "no harness wheel in target/wheels/: building it (harness-wheel.sh; minutes the first time)"
  harness=$(bash sdk-python/scripts/harness-wheel.sh | tail -1)
  harness=${harness#"$repo/"}
fi

# The checks of the harness wheel need auditwheel (and, with --shim, twine
# and wheel), once, in the venv.
if ! "$py" -c "import auditwheel" 2>/dev/null || { [ -n "$shim" ] && ! "$py" -c "import twine, wheel" 2>/dev/null; }; then
  say "pip install twine auditwheel wheel into $venv (checks of the wheels)"
  "${pip[@]}" install -q twine==7.0.0 auditwheel==6.8.2 wheel==0.48.0 >&2
fi

# check_harness WHEEL: its name's tag is the one auditwheel finds it
# consistent with (every ELF file in it: the module, and with --shim the
# host), and pip takes it for each CPython from 3.11 on this platform and
# refuses it for 3.10 (`pip install --dry-run --python-version`, the tags pip
# computes for that version; no interpreter of it is needed).
check_harness() {
  local whl=$1 log=$stage/check.log consistent v
  case "$(basename "$whl")" in
    *-cp311-abi3-manylinux_2_28_*.whl) ;;
    *) die "the harness wheel is $(basename "$whl"): not cp311-abi3-manylinux_2_28 (ADR 065; harness-wheel.sh builds it)" ;;
  esac
  "$repo/$venv/bin/auditwheel" show "$whl" >"$log" 2>&1 || { cat "$log" >&2; die "auditwheel show failed on the harness wheel"; }
  # auditwheel wraps its lines: the tag it finds consistent, on one line.
  consistent=$(tr -s '\n ' '  ' <"$log" | grep -o 'is consistent with the following platform tag: "[^"]*"' | head -1 | cut -d'"' -f2)
  case "$(basename "$whl")" in
    *"$consistent".whl) [ -n "$consistent" ] && say "auditwheel: the harness wheel is consistent with $consistent" ;;
    *) cat "$log" >&2; die "auditwheel: the harness wheel's tag is not the one it is consistent with (${consistent:-none})" ;;
  esac
  for v in 3.11 3.12 3.13 3.14; do
    "${pip[@]}" install --dry-run --no-deps --only-binary=:all: --python-version "$v" --target "$stage/dry-run" "$whl" >"$log" 2>&1 ||
      { cat "$log" >&2; die "pip refuses the harness wheel for CPython $v"; }
  done
  if "${pip[@]}" install --dry-run --no-deps --only-binary=:all: --python-version 3.10 --target "$stage/dry-run" "$whl" >"$log" 2>&1; then
    die "pip takes the harness wheel for CPython 3.10, which it does not support"
  fi
  say "pip takes the harness wheel for CPython 3.11, 3.12, 3.13 and 3.14 and refuses it for 3.10"
  check_unwinder "$whl"
}

# check_unwinder WHEEL: every ELF file in it takes its unwinder from the
# system's libgcc_s, not from a copy linked in. zig links LLVM's libunwind
# unless told otherwise, and wasmtime's registration of each module's unwind
# info with it made a test host's reset 15 times slower (ADR 065, addendum).
check_unwinder() {
  local whl=$1 elves=$stage/elves f needed syms
  rm -rf "$elves"
  "$py" - "$whl" "$elves" <<'PY'
import os, sys, zipfile
whl, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(whl) as z:
    for name in z.namelist():
        with z.open(name) as f:
            if f.read(4) != b"\x7fELF":
                continue
        z.extract(name, out)
PY
  while IFS= read -r f; do
    # Read whole before grep: `grep -q` would close the pipe early, and
    # pipefail would call readelf's SIGPIPE a failure.
    needed=$(readelf -dW "$f") && syms=$(readelf --dyn-syms -W "$f") || die "readelf failed on $(basename "$f")"
    grep -q 'NEEDED.*\[libgcc_s\.so\.1\]' <<<"$needed" && grep -q ' UND __register_frame@' <<<"$syms" ||
      die "$(basename "$f") in the harness wheel does not take its unwinder from libgcc_s.so.1 (a linked-in libunwind makes wasmtime's module loads and drops slow: ADR 065; harness-wheel.sh's wrapper names libgcc_s)"
  done < <(find "$elves" -type f)
  say "every ELF file in the harness wheel takes its unwinder from libgcc_s.so.1"
}

rm -f "$out"/wasmkeep_actor-*.whl "$out"/wasmkeep_actor_harness-*.whl "$out"/wasmkeep_actor-*.tar.gz
cp "$sdk" "$out/"
if [ -n "$shim" ]; then
  [ -x "$shim" ] || die "--shim $shim is not an executable"
  unpacked=$stage/harness
  "$py" -m wheel unpack -d "$unpacked" "$harness" >/dev/null
  top=$(ls -d "$unpacked"/wasmkeep_actor_harness-*)
  data=$top/wasmkeep_actor_harness-$version.data/scripts
  mkdir -p "$data"
  cp "$shim" "$data/wasmkeep-shim"
  chmod 755 "$data/wasmkeep-shim"
  strip "$data/wasmkeep-shim" 2>/dev/null || true
  mkdir -p "$stage/harness-out"
  "$py" -m wheel pack -d "$stage/harness-out" "$top" >/dev/null
  harness=$(ls "$stage"/harness-out/*.whl)
fi
check_harness "$harness"
cp "$harness" "$out/"
if $sdist; then
  "$py" -c "import sys; from setuptools import build_meta as b; sys.exit(0)" || die "setuptools is missing in $venv"
  (cd "$stage/src" && "$py" -c "from setuptools import build_meta as b; print(b.build_sdist('$stage/out'))") >"$stage/sdist.log" 2>&1 \
    || { cat "$stage/sdist.log" >&2; die "building the SDK's sdist failed"; }
  cp "$stage"/out/wasmkeep_actor-"$version".tar.gz "$out/" || die "no sdist wasmkeep_actor-$version.tar.gz was written"
fi
if [ -n "$shim" ]; then
  "$repo/$venv/bin/twine" check --strict "$out"/wasmkeep_actor*-"$version"* >&2 || die "twine check failed"
fi
say "the SDK ($(du -k "$out/$(basename "$sdk")" | cut -f1) kB) and the harness ($(du -k "$out/$(basename "$harness")" | cut -f1) kB) in $out"
echo "$out/$(basename "$sdk")"
echo "$out/$(basename "$harness")"
