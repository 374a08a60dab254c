#!/usr/bin/env bash
# What a guest author does with the packages `cargo xtask release` made, per
# language, in an empty temporary folder and without a registry server (ADR
# 029): `wasmkeep-shim new` without --sdk (a project on versions), install the
# SDK from the release folder, build, test in the language's own runner,
# serve, a first request. Prints each language's time from `new` to the first
# response. The registry trial (local registries, the checkout hidden) is
# issue 27's next step; until then the packages come from the folder:
#   rust    [patch.crates-io] to the unpacked .crate files; builds in the
#           project's own target/; its tests drive the C archive's harness
#           library (WASMKEEP_HARNESS_LIB; ADR 035), so no host is compiled
#   ts      npm install of the two tarballs (the SDK and this platform's package)
#   python  a venv, the two wheels (--no-deps), then their dependencies from PyPI
#   c       the archive unpacked, PKG_CONFIG_PATH to its lib/pkgconfig
#
#   bash scripts/release-trial.sh [--release DIR] [--shim <wasmkeep-shim>] [rust|ts|python|c]...
#
# DIR defaults to target/release-packages/<version> (`cargo xtask release
# --profile debug` writes it in about 2 minutes once the debug builds exist).
# Not in the test command (the registry trial is).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
release=$root/target/release-packages/$version
shim=$root/target/debug/wasmkeep-shim
langs=()
while (($#)); do
  case "$1" in
    --release) release=$(realpath "$2"); shift 2 ;;
    --shim) shim=$(realpath "$2"); shift 2 ;;
    rust|ts|python|c) langs+=("$1"); shift ;;
    *) echo "release-trial: unknown argument $1 (use --release DIR, --shim PATH, rust, ts, python, c)" >&2; exit 2 ;;
  esac
done
((${#langs[@]})) || langs=(rust ts python c)
[ -x "$shim" ] || { echo "release-trial: $shim is missing: cargo build -p wasmkeep-shim" >&2; exit 1; }
[ -f "$release/SHA256SUMS" ] || { echo "release-trial: no release in $release: cargo xtask release --profile debug" >&2; exit 1; }
(cd "$release" && sha256sum --quiet -c SHA256SUMS) || { echo "release-trial: $release/SHA256SUMS does not match" >&2; exit 1; }

tmp=$(mktemp -d)
server=""
cleanup() { [ -z "$server" ] || kill "$server" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
# Each project builds on its own: nothing of the checkout's cargo set-up.
unset CARGO_TARGET_DIR WASMKEEP_SDK

for lang in "${langs[@]}"; do
  name=hello-$lang
  dir=$tmp/$name
  log=$tmp/$lang.log
  fail() { echo "release-trial: $lang: $1 failed; its output:" >&2; tail -40 "$log" >&2; exit 1; }
  start=$(date +%s.%N)
  "$shim" new "$dir" --lang "$lang" >"$log" 2>&1 || fail "wasmkeep-shim new"
  if grep -rqF "$root" "$dir" --exclude=README.md --exclude=wasmkeep.toml; then
    grep -rlF "$root" "$dir" >&2
    fail "new (a file names the checkout)"
  fi
  case $lang in
    rust)
      {
        echo
        echo "# release-trial: the packaged crates, until a registry serves them."
        echo "[patch.crates-io]"
        mkdir -p "$tmp/crates"
        for crate in "$release"/crates/*.crate; do
          tar -xzf "$crate" -C "$tmp/crates"
          base=$(basename "$crate" .crate)
          echo "${base%-*} = { path = \"$tmp/crates/$base\" }"
        done
      } >>"$dir/Cargo.toml"
      mkdir -p "$tmp/c-sdk"
      tar -xzf "$release"/c/*.tar.gz -C "$tmp/c-sdk"
      lib=$tmp/c-sdk/lib/libwasmkeep_c_harness.so
      (cd "$dir" && "$shim" build --out "$name.wasm" && WASMKEEP_HARNESS_LIB=$lib cargo test --quiet) >>"$log" 2>&1 ||
        fail "build and cargo test" ;;
    ts)
      (cd "$dir" && npm install --no-audit --no-fund --loglevel=error "$release"/npm/*.tgz \
        && npm run build --silent && npm test --silent) >>"$log" 2>&1 || fail "npm install, build and test" ;;
    python)
      (cd "$dir" && python3 -m venv .venv \
        && .venv/bin/pip install -q --disable-pip-version-check --no-deps "$release"/python/*.whl \
        && .venv/bin/pip install -q --disable-pip-version-check "componentize-py==0.25.1" "pytest>=7" \
        && .venv/bin/python -m wasmkeep_actor build actor.py -o "$name.wasm" && .venv/bin/python -m pytest -q) >>"$log" 2>&1 \
        || fail "venv, install, build and pytest" ;;
    c)
      [ -d "$tmp/c-sdk" ] || { mkdir -p "$tmp/c-sdk" && tar -xzf "$release"/c/*.tar.gz -C "$tmp/c-sdk"; }
      pc=$tmp/c-sdk/lib/pkgconfig
      (cd "$dir" && PKG_CONFIG_PATH=$pc make --quiet && PKG_CONFIG_PATH=$pc make --quiet test) >>"$log" 2>&1 || fail "make and make test" ;;
  esac
  "$shim" serve --manifest "$dir/wasmkeep.toml" --data-dir "$dir/.wasmkeep" --listen 127.0.0.1:0 >"$tmp/serve.log" 2>&1 &
  server=$!
  url=""
  for _ in $(seq 1 600); do
    url=$(grep -o 'listening on http://127.0.0.1:[0-9]*' "$tmp/serve.log" | head -1 | cut -d' ' -f3) || true
    [ -n "$url" ] && break
    kill -0 "$server" 2>/dev/null || { cat "$tmp/serve.log" >&2; fail "serve"; }
    sleep 0.1
  done
  [ -n "$url" ] || { cat "$tmp/serve.log" >&2; fail "serve (not listening after 60 s)"; }
  got=$(curl -s -X POST "$url/$name/a")
  [ "$got" = 1 ] || { cat "$tmp/serve.log" >&2; fail "POST $url/$name/a (answered '$got', not 1)"; }
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  server=""
  printf 'release-trial: %-6s new + install + build + test + first response in %.1f s\n' "$lang" "$(echo "$(date +%s.%N) - $start" | bc)"
done
