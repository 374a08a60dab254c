#!/usr/bin/env bash
# What a user of `wasmkeep-shim new` does, per language, in an empty temporary
# folder: new, the README's build and test commands, then serve --watch and a
# first request. Prints the time of each language from `new` to the first
# response; then a change to the source must rebuild and swap the component
# in (serve --watch) with the actor's count kept. With C, also the bank
# (`new --template bank`: its rules and its chaos tests, then a deposit
# served), the other templates' builds being the examples' own.
#
#   bash scripts/new-project-trial.sh [--shim <wasmkeep-shim>] [rust|ts|python|c]...
#
# Needs the full setup (bash scripts/setup.sh) and the harnesses the test
# command builds (node, C and Python), as each language's test runner uses one.
set -euo pipefail
# A new project's tests as its author runs them: the chaos tests' own default.
unset WASMKEEP_CHAOS_SEEDS
cd "$(dirname "$0")/.."
root=$PWD
shim=$root/target/debug/wasmkeep-shim
langs=()
while (($#)); do
  case "$1" in
    --shim) shim=$(realpath "$2"); shift 2 ;;
    rust|ts|python|c) langs+=("$1"); shift ;;
    *) echo "new-project-trial: unknown argument $1 (use --shim <path>, rust, ts, python, c)" >&2; exit 2 ;;
  esac
done
((${#langs[@]})) || langs=(rust ts python c)
[ -x "$shim" ] || { echo "new-project-trial: $shim is missing: cargo build -p wasmkeep-shim" >&2; exit 1; }

tmp=$(mktemp -d)
server=""
cleanup() { [ -z "$server" ] || kill "$server" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

py=$root/target/py-venv/bin/python
for lang in "${langs[@]}"; do
  name=hello-$lang
  dir=$tmp/$name
  log=$tmp/$lang.log
  start=$(date +%s.%N)
  fail() { echo "new-project-trial: $lang: $1 failed; its output:" >&2; tail -40 "$log" >&2; exit 1; }
  # --sdk: this checkout's SDKs. (The published packages need registries to try
  # them from: a later trial, ADR 029.)
  "$shim" new "$dir" --lang "$lang" --sdk "$root" >"$log" 2>&1 || fail "wasmkeep-shim new"
  for f in wasmkeep.toml README.md .gitignore; do [ -f "$dir/$f" ] || fail "new writing $f"; done
  case $lang in
    rust)
      (cd "$dir" && "$shim" build --out "$name.wasm" && cargo test --quiet) >>"$log" 2>&1 || fail "build and cargo test"
      # A build for the machine itself links, and warns of nothing.
      built=0
      (cd "$dir" && cargo build) >"$tmp/cargo-build.log" 2>&1 || built=$?
      cat "$tmp/cargo-build.log" >>"$log"
      ((built == 0)) || fail "cargo build"
      ! grep -E '^warning' "$tmp/cargo-build.log" || fail "cargo build (it printed a warning)" ;;
    ts)
      (cd "$dir" && npm install --no-audit --no-fund --loglevel=error && npm run build --silent && npm test --silent) >>"$log" 2>&1 || fail "npm install, build and test" ;;
    python)
      (cd "$dir" && "$py" -m wasmkeep_actor build actor.py -o "$name.wasm" && "$py" -m pytest -q) >>"$log" 2>&1 || fail "build and pytest" ;;
    c)
      (cd "$dir" && make --quiet && make --quiet test) >>"$log" 2>&1 || fail "make and make test" ;;
  esac
  "$shim" serve --watch --manifest "$dir/wasmkeep.toml" --data-dir "$dir/.wasmkeep" --listen 127.0.0.1:0 >"$tmp/serve.log" 2>&1 &
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
  printf 'new-project: %-6s new + build + test + first response in %.1f s\n' "$lang" "$(echo "$(date +%s.%N) - $start" | bc)"

  # serve --watch: an edit to the source rebuilds with the language's build
  # command and swaps the component in; the actor keeps its count.
  case $lang in
    rust) src=src/lib.rs; comment="// edited" ;;
    ts) src=src/actor.ts; comment="// edited" ;;
    python) src=actor.py; comment="# edited" ;;
    c) src=actor.c; comment="/* edited */" ;;
  esac
  edited=$(date +%s.%N)
  echo "$comment" >>"$dir/$src"
  for _ in $(seq 1 1200); do
    grep -q "watch: reloaded class\|watch: class .*failed\|does not load" "$tmp/serve.log" && break
    sleep 0.1
  done
  grep -q "watch: reloaded class $name" "$tmp/serve.log" || { cat "$tmp/serve.log" >&2; fail "serve --watch after editing $src"; }
  got=$(curl -s -X POST "$url/$name/a")
  kill "$server"; wait "$server" 2>/dev/null || true; server=""
  [ "$got" = 2 ] || { cat "$tmp/serve.log" >&2; fail "POST after the reload (answered '$got', not 2: the count was not kept)"; }
  printf 'new-project: %-6s serve --watch: edit to reloaded and answered in %.1f s\n' "$lang" "$(echo "$(date +%s.%N) - $edited" | bc)"
done

# Another template than the counter: the bank, in C (the quickest to build:
# a few seconds with its chaos tests).
if [[ " ${langs[*]} " == *" c "* ]]; then
  name=bank-c dir=$tmp/bank-c log=$tmp/bank-c.log start=$(date +%s.%N)
  fail() { echo "new-project-trial: bank in c: $1 failed; its output:" >&2; tail -40 "$log" >&2; exit 1; }
  "$shim" new "$dir" --lang c --template bank --sdk "$root" >"$log" 2>&1 || fail "wasmkeep-shim new --template bank"
  (cd "$dir" && make --quiet && make --quiet test) >>"$log" 2>&1 || fail "make and make test"
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
  got=$(curl -s -X POST "$url/$name/ada/deposit?op=d1&amount=100")
  kill "$server"; wait "$server" 2>/dev/null || true; server=""
  [ "$got" = 100 ] || { cat "$tmp/serve.log" >&2; fail "POST $url/$name/ada/deposit (answered '$got', not 100)"; }
  printf 'new-project: bank in c: new + build + test + first response in %.1f s\n' "$(echo "$(date +%s.%N) - $start" | bc)"
fi
