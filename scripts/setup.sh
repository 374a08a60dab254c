#!/usr/bin/env bash
# Installs what building and testing need and is missing; skips what is present.
# Only package registries are used (Debian's apt, PyPI through pip, npm, the
# crate registry through cargo install).
#
#   bash scripts/setup.sh           everything the test command needs
#   bash scripts/setup.sh --serve   only what building and serving the examples
#                                   needs (scripts/main.sh): no test harnesses,
#                                   test-only tools or conformance testees
#
# It installs only what must exist before cargo and xtask can run (toolchains,
# system packages, the Python venv and its tools, npm packages, cargo-hakari)
# and never calls cargo xtask: what needs xtask or a cargo build (the C SDK's
# WASI adapter, the QuickJS backend's parts, the TypeScript, C and Python
# guests, the Python harness) is built by `cargo xtask setup`, and by
# `cargo xtask test` and `serve`, which the bootstraps scripts/test.sh and
# scripts/main.sh run after this script (ADR 082).
set -euo pipefail

say() { echo "setup: [$(date +%T)] $*"; }
cd "$(dirname "$0")/.."
for_serve=false
case "${1:-}" in
  "") ;;
  --serve) for_serve=true ;;
  *) echo "setup: unknown argument $1 (use --serve, or nothing for everything the tests need)" >&2; exit 2 ;;
esac
# The SDKs' own setup scripts read this.
if $for_serve; then export WASMKEEP_SETUP_FOR=serve; else export WASMKEEP_SETUP_FOR=test; fi

# Rust guests compile to wasm32-wasip2. With rustup's wasm32-wasip2 target
# installed nothing more is needed; without it we use Debian's rustc-web and its
# standard library source (build-std), as docs/adr/002-guest-toolchain.md says.
if command -v rustup >/dev/null 2>&1 && rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2; then
  say "rust guests: rustup target wasm32-wasip2 is installed"
else
  missing=()
  for p in rustc-web cargo-web rust-web-src libstd-rust-web-dev wasi-libc; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if ((${#missing[@]})); then
    say "rust guests: installing ${missing[*]} (Debian's rustc-web: no wasm32 target is installed)"
    if [ "$(id -u)" = 0 ]; then sudo=(); else sudo=(sudo); fi
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    say "rust guests: Debian's rustc-web fallback is installed"
  fi
fi

# TypeScript guests (sdk-ts/): node and npm, then each TS package's npm
# dependencies from its lock file where node_modules is missing (xtask then
# builds the QuickJS backend's parts and the TS guests).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  say "typescript: installing nodejs and npm (Debian)"
  if [ "$(id -u)" = 0 ]; then sudo=(); else sudo=(sudo); fi
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
ts_dirs=(sdk-ts examples/counter-ts examples/chat-ts examples/bank-ts)
if ! $for_serve; then ts_dirs+=(conformance/testees/ts); fi
for dir in "${ts_dirs[@]}"; do
  if [ -f "$dir/package-lock.json" ] && [ ! -d "$dir/node_modules" ]; then
    say "typescript: npm ci in $dir"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  fi
done
say "typescript: node $(node --version), npm $(npm --version)"

# The C and Python SDKs install what they need themselves (sdk-*/scripts/setup.sh,
# which read WASMKEEP_SETUP_FOR; their guests are built by xtask).
for sdk in sdk-c sdk-python; do
  if [ -f "$sdk/scripts/setup.sh" ]; then bash "$sdk/scripts/setup.sh"; fi
done

# The dashboard's browser test (test only; docs/adr/025-dashboard.md):
# Debian's chromium and chromium-driver, and Selenium in the venv the Python
# SDK's setup made (made here when it is missing).
if ! $for_serve; then
  missing=()
  for p in chromium chromium-driver; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if ((${#missing[@]})); then
    say "dashboard: installing ${missing[*]} (Debian)"
    if [ "$(id -u)" = 0 ]; then sudo=(); else sudo=(sudo); fi
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  [ -x target/py-venv/bin/python ] || python3 -m venv target/py-venv
  if [ "$(target/py-venv/bin/python -c 'import selenium; print(selenium.__version__)' 2>/dev/null)" != "4.51.0" ]; then
    say "dashboard: pip install selenium==4.51.0"
    target/py-venv/bin/python -m pip install -q --disable-pip-version-check selenium==4.51.0
  fi
fi

# The registry trial (test only; ADR 032): verdaccio, publint and
# arethetypeswrong from scripts/registry-tools' lock file, and pypiserver, twine, auditwheel and wheel (the release's
# checks of the Python wheels) in the venv.
if ! $for_serve; then
  tools=scripts/registry-tools/node_modules/.bin
  if [ ! -x $tools/verdaccio ] || [ ! -x $tools/publint ] || [ ! -x $tools/attw ]; then
    say "registry trial: npm ci in scripts/registry-tools (verdaccio 6.8.0, publint 0.3.25, @arethetypeswrong/cli 0.18.5)"
    (cd scripts/registry-tools && npm ci --no-audit --no-fund --loglevel=error)
  fi
  if ! target/py-venv/bin/python -c "import pypiserver, twine, auditwheel, wheel" 2>/dev/null; then
    say "registry trial: pip install pypiserver==2.4.2 twine==7.0.0 auditwheel==6.8.2 wheel==0.48.0"
    target/py-venv/bin/python -m pip install -q --disable-pip-version-check \
      pypiserver==2.4.2 twine==7.0.0 auditwheel==6.8.2 wheel==0.48.0
  fi
fi

for tool in cargo rustfmt cargo-clippy; do
  command -v "$tool" >/dev/null 2>&1 || { echo "setup: $tool is missing: install Rust with rustup (https://rustup.rs) and the rustfmt and clippy components" >&2; exit 1; }
done

# The test command checks that host/workspace-hack is current (one feature set
# of wasmtime across the workspace: ADR 014); serving needs no cargo-hakari.
if ! $for_serve && [ "$(cargo hakari --version 2>/dev/null | awk '{print $2}')" != "0.9.39" ]; then
  say "installing cargo-hakari 0.9.39 (cargo install; about 1.5 min on 2 cores)"
  cargo install --quiet --locked cargo-hakari --version 0.9.39
fi

say "ready"
