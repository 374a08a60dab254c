#!/usr/bin/env bash
# Issue 27's registry trial (ADR 032): every package of a release published
# to registries on 127.0.0.1, then, per language in an empty folder with the
# checkout hidden (unshare -m, a tmpfs over it), what a guest author does:
# install from the registry, `wasmkeep-shim new`, build, test in the
# language's own runner, serve, a first response. Prints each language's time
# from the first install to the first response. The Rust trial, which
# compiles, runs beside the others, which mostly install and wait (ADR 089).
#
#   bash scripts/registry-trial.sh [--release DIR] [--plan] [rust|ts|python|c]...
#
# --plan: say which languages the release has packages for (each one it has
# none for is skipped, in one line) and stop before starting a registry.
#
# The registries (stopped by the PIDs recorded here, also when a step fails):
#   npm    verdaccio 6.8.0 (scripts/registry-tools/), @wasmkeep/* published
#          to it, everything else proxied from the npm registry
#   PyPI   pypiserver, the two wheels and the sdist uploaded with twine, the
#          SDK's dependencies from PyPI put beside them (no fallback: pip in
#          the trial talks to 127.0.0.1 only)
#   Cargo  scripts/cargo-registry.py, the eight .crate files uploaded as
#          `cargo publish` would send them
# TypeScript starts with the package README's own `npx ... wasmkeep-shim new`
# line, with no terminal, and fails when the project's node_modules is over
# 150 MB (ADR 071), naming the biggest packages.
# Python runs once per CPython found among 3.11, 3.12 and 3.13 (python3.X on
# PATH, else pyenv's newest 3.X), each in its own folder with that python3
# first on PATH: the harness wheel is one abi3 wheel for all of them (ADR
# 065). A version not found is skipped, and said so.
# Where the host comes from: npm's platform package (TypeScript), the harness
# wheel's `wasmkeep-shim` script (Python), the C archive's bin/ (C and Rust:
# a Rust author's prebuilt host; the project's `cargo test` compiles the host
# library from the registry's crates). Only the Rust trial compiles Rust.
# A Rust project names crates.io: the trial adds a [patch.crates-io] to the
# registry's wasmkeep-actor and wasmkeep-actor-testing, which is what a user
# of a mirror of crates.io would not need.
#
# DIR defaults to target/release-packages/<version> (`cargo xtask release
# --profile debug`); a release of some pieces (`--only npm`) publishes only
# those and tries only the languages it has packages for (Rust needs the
# crates and the C archive, whose host binary it serves with). Needs `bash scripts/setup.sh` (verdaccio, pypiserver,
# twine) and root for unshare -m (without it the checkout is not hidden, and
# the trial says so).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
release=$root/target/release-packages/$version
langs=() plan=false
while (($#)); do
  case "$1" in
    --release) release=$(realpath "$2"); shift 2 ;;
    --plan) plan=true; shift ;;
    rust|ts|python|c) langs+=("$1"); shift ;;
    *) echo "registry-trial: unknown argument $1 (use --release DIR, --plan, rust, ts, python, c)" >&2; exit 2 ;;
  esac
done
((${#langs[@]})) || langs=(ts python c rust)
say() { echo "registry-trial: $*"; }
die() { echo "registry-trial: FAILED: $*" >&2; exit 1; }
[ -f "$release/SHA256SUMS" ] || die "no release in $release: cargo xtask release --profile debug"
(cd "$release" && sha256sum --quiet -c SHA256SUMS) || die "$release/SHA256SUMS does not match"

# A release of some pieces only (`cargo xtask release --only npm`) publishes
# what it has and is tried for the languages it has packages for; each other
# language is skipped, said in one line.
has() { compgen -G "$release/$1" >/dev/null; }
count() { if has "$1"; then ls "$release"/$1 | wc -l; else echo 0; fi; }
lacks() { # LANG: what the release lacks for LANG's trial (nothing when it has it all)
  case $1 in
    ts) has 'npm/*.tgz' || echo "no npm tarball" ;;
    python) has 'python/*' || echo "no Python package" ;;
    c) has 'c/*.tar.gz' || echo "no C archive" ;;
    rust)
      if ! has 'crates/*.crate'; then echo "no crate"
      elif ! has 'c/*.tar.gz'; then echo "no C archive (a Rust project serves with its host binary)"
      fi ;;
  esac
}
tried=()
for lang in "${langs[@]}"; do
  why=$(lacks "$lang")
  if [ -n "$why" ]; then say "$lang: skipped: the release has $why"; else tried+=("$lang"); fi
done
((${#tried[@]})) || die "the release in $release has the packages of none of: ${langs[*]}"
langs=("${tried[@]}")
tries() { [[ " ${langs[*]} " == *" $1 "* ]]; }
if $plan; then say "would try: ${langs[*]}"; exit 0; fi

py=$root/target/py-venv/bin/python
verdaccio=$root/scripts/registry-tools/node_modules/.bin/verdaccio
[ -x "$verdaccio" ] || die "verdaccio is missing: bash scripts/setup.sh (npm ci in scripts/registry-tools)"
"$py" -c "import pypiserver, twine" 2>/dev/null || die "pypiserver or twine is missing in target/py-venv: bash scripts/setup.sh"

tmp=$(mktemp -d /tmp/wasmkeep-registry-trial.XXXXXX)
pids=()
# Cargo keeps a registry's index, .crate files and unpacked sources under
# folders named 127.0.0.1-<hash>, the same for any port: an earlier run's
# sources of the same version would be used again. They are removed before
# and after each run (no other registry on this machine's 127.0.0.1 is kept).
cargo_home=${CARGO_HOME:-$HOME/.cargo}
forget_trial_crates() { rm -rf "$cargo_home"/registry/{index,cache,src}/127.0.0.1-*; }
forget_trial_crates
rust_beside=
cleanup() {
  # The Rust trial run beside the others (below), by its process group.
  if [ -n "$rust_beside" ]; then
    kill -- "-$rust_beside" 2>/dev/null || true
    wait "$rust_beside" 2>/dev/null || true
  fi
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  forget_trial_crates
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
free_port() { "$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_http() { # URL LOG NAME
  for _ in $(seq 1 300); do
    curl -fs -o /dev/null "$1" && return 0
    sleep 0.1
  done
  cat "$2" >&2
  die "$3 did not answer at $1 within 30 s"
}

# --- The registries --------------------------------------------------------
npm_port=$(free_port)
mkdir -p "$tmp/verdaccio"
cat >"$tmp/verdaccio/config.yaml" <<EOF
storage: $tmp/verdaccio/storage
auth:
  htpasswd:
    file: $tmp/verdaccio/htpasswd
    max_users: 1
uplinks:
  npmjs:
    url: https://registry.npmjs.org/
packages:
  '@wasmkeep/*':
    access: \$all
    publish: \$authenticated
  '**':
    access: \$all
    publish: \$authenticated
    proxy: npmjs
web:
  enable: false
max_body_size: 200mb
log: { type: stdout, format: pretty, level: warn }
EOF
"$verdaccio" --config "$tmp/verdaccio/config.yaml" --listen "127.0.0.1:$npm_port" >"$tmp/verdaccio.log" 2>&1 &
pids+=($!)
npm_url=http://127.0.0.1:$npm_port
export npm_config_update_notifier=false
say "npm registry (verdaccio, pid ${pids[-1]}) at $npm_url"

pypi_port=$(free_port)
mkdir -p "$tmp/pypi"
"$py" -m pypiserver run -i 127.0.0.1 -p "$pypi_port" -a . -P . --disable-fallback "$tmp/pypi" >"$tmp/pypiserver.log" 2>&1 &
pids+=($!)
pypi_url=http://127.0.0.1:$pypi_port
say "PyPI (pypiserver, pid ${pids[-1]}) at $pypi_url"

cargo_port=$(free_port)
python3 scripts/cargo-registry.py serve "$tmp/cargo-registry" --port "$cargo_port" >"$tmp/cargo-registry.log" 2>&1 &
pids+=($!)
cargo_url=http://127.0.0.1:$cargo_port
say "Cargo registry (scripts/cargo-registry.py, pid ${pids[-1]}) at $cargo_url"

wait_http "$npm_url/-/ping" "$tmp/verdaccio.log" verdaccio
wait_http "$pypi_url/simple/" "$tmp/pypiserver.log" pypiserver
wait_http "$cargo_url/index/config.json" "$tmp/cargo-registry.log" cargo-registry.py

# --- npm's checkers of published packages ------------------------------------
# Each tarball's contents pass publint, and the ones with types pass
# arethetypeswrong as an ESM-only package (require() from CommonJS and node10's
# resolution, which ignores "exports", are not supported; ADR 032).
# What the release lacks is not published (above).
tools=$root/scripts/registry-tools/node_modules/.bin
[ -x "$tools/publint" ] && [ -x "$tools/attw" ] ||
  die "publint or attw is missing: bash scripts/setup.sh (npm ci in scripts/registry-tools)"
if has 'npm/*.tgz'; then
  for tgz in "$release"/npm/*.tgz; do
    rm -rf "$tmp/lint" && mkdir -p "$tmp/lint" && tar -xzf "$tgz" -C "$tmp/lint"
    "$tools/publint" --pack false "$tmp/lint/package" >"$tmp/publint.log" 2>&1 ||
      { cat "$tmp/publint.log" >&2; die "publint $(basename "$tgz")"; }
    if grep -q '"types"' "$tmp/lint/package/package.json"; then
      "$tools/attw" --profile esm-only "$tgz" >"$tmp/attw.log" 2>&1 ||
        { cat "$tmp/attw.log" >&2; die "arethetypeswrong $(basename "$tgz")"; }
    fi
  done
  say "npm tarballs pass publint and arethetypeswrong (esm-only): $(ls "$release"/npm/*.tgz | xargs -n1 basename | tr '\n' ' ')"
fi

# --- Publish every package --------------------------------------------------
start=$(date +%s.%N)
token=$(curl -fs -X PUT -H 'Content-Type: application/json' \
  -d '{"name": "trial", "password": "trial-password"}' "$npm_url/-/user/org.couchdb.user:trial" |
  "$py" -c 'import json, sys; print(json.load(sys.stdin)["token"])') || die "adding verdaccio's publishing user"
printf '//127.0.0.1:%s/:_authToken=%s\n' "$npm_port" "$token" >"$tmp/publish.npmrc"
# The platform package first: the SDK's optionalDependencies name it.
if has 'npm/*.tgz'; then
  for tgz in $(ls "$release"/npm/*.tgz | sort -r); do
    npm publish --userconfig "$tmp/publish.npmrc" --registry "$npm_url" --ignore-scripts --loglevel=error "$tgz" \
      >>"$tmp/publish.log" 2>&1 || { cat "$tmp/publish.log" >&2; die "npm publish $(basename "$tgz")"; }
  done
fi
if has 'python/*'; then
  "$py" -m twine upload --disable-progress-bar --non-interactive --repository-url "$pypi_url/" -u trial -p trial \
    "$release"/python/* >>"$tmp/publish.log" 2>&1 || { cat "$tmp/publish.log" >&2; die "twine upload"; }
fi
# What the SDK's wheels need from PyPI, beside them (pip's cache makes this quick),
# when the Python trial runs: for each CPython it runs on (pytest's
# dependencies differ by version).
if tries python; then
  for v in 3.11 3.12 3.13; do
    "$py" -m pip download -q --disable-pip-version-check -d "$tmp/pypi" --only-binary=:all: --python-version "$v" \
      "componentize-py==0.25.1" "pytest>=7" >>"$tmp/publish.log" 2>&1 || { cat "$tmp/publish.log" >&2; die "pip download of the SDK's dependencies for CPython $v"; }
  done
fi
if has 'crates/*.crate'; then
  python3 scripts/cargo-registry.py upload "$cargo_url" "$release"/crates/*.crate >>"$tmp/publish.log" 2>&1 ||
    { cat "$tmp/publish.log" "$tmp/cargo-registry.log" >&2; die "uploading the crates"; }
fi
printf 'registry-trial: published %s npm tarballs, %s Python files, %s crates in %.1f s\n' \
  "$(count 'npm/*.tgz')" "$(count 'python/*')" "$(count 'crates/*.crate')" \
  "$(echo "$(date +%s.%N) - $start" | bc)"

# --- Per language: the user's steps, in a script run with the checkout hidden
cat >"$tmp/user.sh" <<'EOF'
# Runs as a guest author would, in $WORK, knowing only the registries.
set -euo pipefail
lang=$1
cd "$WORK"
name=hello-$lang
serve=()
case $lang in
  ts)
    # The package README's own line, as written, with no terminal to ask on
    # (npx without --yes stops there: "npx canceled due to missing packages").
    eval "${TS_NEW// hello / $name }" </dev/null
    cd "$name"
    npm install --no-audit --no-fund --loglevel=error
    # What a project on the default engine installs (ADR 071): at most 150 MB.
    mb=$(du -sm node_modules | cut -f1)
    du -sm node_modules/@*/* node_modules/[!@.]* 2>/dev/null | sort -rn >packages-by-size.txt || true
    echo "node_modules: $mb MB (biggest: $(head -6 packages-by-size.txt |
      awk '{sub("node_modules/", "", $2); printf "%s%s %s MB", (NR > 1 ? ", " : ""), $2, $1}'))"
    if ((mb > 150)); then
      echo "node_modules is $mb MB, over 150 MB; the biggest packages (MB):" >&2
      head -15 packages-by-size.txt >&2
      exit 1
    fi
    npm run build --silent
    npm test --silent
    serve=(npx --no-install wasmkeep-shim serve) ;;
  python)
    # The CPython of this run is the python3 on PATH (the trial put it first).
    python3 -c "import sys; v = '%d.%d' % sys.version_info[:2]; sys.exit(0 if v == '$PY_VERSION' else 'python3 is ' + v + ', not $PY_VERSION')"
    python3 -m venv tools
    tools/bin/pip install -q --disable-pip-version-check "wasmkeep-actor[testing]==$VERSION"
    tools/bin/wasmkeep-shim new "$name" --lang python
    cd "$name"
    # The README's steps: its venv and install line, build, pytest.
    eval "$(grep -m1 '^python3 -m venv' README.md | sed 's/ *#.*$//; s/pip install/pip install -q --disable-pip-version-check/')"
    .venv/bin/python -c "import sys, wasmkeep_actor_harness as h; print('CPython', sys.version.split()[0], 'harness', h.HOST_VERSION, h.__file__)"
    .venv/bin/python -m wasmkeep_actor build actor.py -o "$name.wasm"
    .venv/bin/python -m pytest -q
    serve=(.venv/bin/python -m wasmkeep_actor serve) ;;
  c)
    mkdir opt
    # As the archive's README says: unpacked into the prefix itself.
    tar -xzf "$RELEASE"/c/*.tar.gz -C opt
    [ -f opt/README.md ] || { echo "the C archive has no README.md at its top" >&2; exit 1; }
    export PATH=$WORK/opt/bin:$PATH PKG_CONFIG_PATH=$WORK/opt/lib/pkgconfig
    wasmkeep-shim new "$name" --lang c
    cd "$name"
    make --quiet
    make --quiet test
    serve=(wasmkeep-shim serve) ;;
  rust)
    mkdir opt
    tar -xzf "$RELEASE"/c/*.tar.gz -C opt
    export PATH=$WORK/opt/bin:$PATH
    wasmkeep-shim new "$name" --lang rust
    cd "$name"
    printf '\n[patch.crates-io]\nwasmkeep-actor = { version = "%s", registry = "wasmkeep-trial" }\nwasmkeep-actor-testing = { version = "%s", registry = "wasmkeep-trial" }\n' \
      "$VERSION" "$VERSION" >>Cargo.toml
    # The README's build: the component where cargo test builds it and serve serves it.
    wasmkeep-shim build
    cargo test --quiet
    # What a Rust author often types first: a build for the machine itself
    # links (export! makes no component exports there), and warns of nothing
    # (cargo warns of a profile that names a package the project does not build).
    cargo build 2>cargo-build.log || { cat cargo-build.log >&2; echo "cargo build failed" >&2; exit 1; }
    if grep -E '^warning' cargo-build.log >&2; then echo "cargo build warned (above)" >&2; exit 1; fi
    serve=(wasmkeep-shim serve) ;;
esac
"${serve[@]}" --manifest wasmkeep.toml --data-dir .wasmkeep --listen 127.0.0.1:0 >serve.log 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
url=""
for _ in $(seq 1 600); do
  url=$(grep -o 'listening on http://127.0.0.1:[0-9]*' serve.log | head -1 | cut -d' ' -f3) || true
  [ -n "$url" ] && break
  kill -0 "$server" 2>/dev/null || { cat serve.log >&2; echo "serve exited" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { cat serve.log >&2; echo "serve: not listening after 60 s" >&2; exit 1; }
got=$(curl -s -X POST "$url/$name/a")
[ "$got" = 1 ] || { cat serve.log >&2; echo "POST $url/$name/a answered '$got', not 1" >&2; exit 1; }
kill "$server"
wait "$server" 2>/dev/null || true
echo "first response: ok"

# `serve --watch` rebuilds after a save by rename (issue 58, ADR 067): `sed -i`
# writes a new file and renames it over the source, as vim and JetBrains' safe
# write do. The counter then adds 10 a POST.
"${serve[@]}" --manifest wasmkeep.toml --data-dir .wasmkeep-watch --listen 127.0.0.1:0 --watch >watch.log 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
url=""
for _ in $(seq 1 600); do
  url=$(grep -o 'listening on http://127.0.0.1:[0-9]*' watch.log | head -1 | cut -d' ' -f3) || true
  [ -n "$url" ] && break
  kill -0 "$server" 2>/dev/null || { cat watch.log >&2; echo "serve --watch exited" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { cat watch.log >&2; echo "serve --watch: not listening after 60 s" >&2; exit 1; }
src=$(grep -rl --exclude-dir=node_modules --exclude-dir=target --exclude-dir=.venv --exclude-dir=tools \
  --exclude-dir=.wasmkeep --exclude-dir=.wasmkeep-watch --include='*.c' --include='*.py' --include='*.ts' --include='*.rs' \
  'n = n + 1' . | head -1)
[ -n "$src" ] || { echo "no source says 'n = n + 1'" >&2; exit 1; }
before=$(curl -s -X POST "$url/$name/w")
watch_start=$(date +%s)
sed -i 's/n = n + 1/n = n + 10/' "$src"
rebuilt=
for _ in $(seq 1 600); do
  sleep 0.5
  now=$(curl -s -X POST "$url/$name/w") || continue
  case "$now" in ''|*[!0-9]*) continue ;; esac
  if [ $((now - before)) -eq 10 ]; then rebuilt=yes; break; fi
  before=$now
done
[ -n "$rebuilt" ] || { cat watch.log >&2; echo "serve --watch: no rebuild within 300 s of a save by rename of $src" >&2; exit 1; }
echo "serve --watch: rebuilt $src within $(($(date +%s) - watch_start)) s of a save by rename"
kill "$server"
wait "$server" 2>/dev/null || true
EOF

# A CPython X.Y's interpreter: python3.X on PATH if it runs (pyenv's shim
# runs only for its selected versions), else pyenv's newest X.Y.*.
find_cpython() {
  local v=$1 p
  p=$(command -v "python$v" 2>/dev/null) && "$p" -c "" 2>/dev/null && { echo "$p"; return 0; }
  command -v pyenv >/dev/null || return 1
  p=$(ls -d "$(pyenv root)/versions/$v".* 2>/dev/null | sort -V | tail -1)
  [ -n "$p" ] && [ -x "$p/bin/python$v" ] && "$p/bin/python$v" -c "" 2>/dev/null && { echo "$p/bin/python$v"; return 0; }
  return 1
}
runs=()
for lang in "${langs[@]}"; do
  if [ "$lang" = python ]; then
    found=()
    for v in 3.11 3.12 3.13; do
      if p=$(find_cpython "$v"); then runs+=("python-$v=$p"); found+=("$v"); else say "python: no CPython $v here (python$v, pyenv): not tried on it"; fi
    done
    ((${#found[@]})) || die "python: no CPython 3.11, 3.12 or 3.13 found"
  else
    runs+=("$lang")
  fi
done

# TypeScript starts as the package's README says (its first `npx ... wasmkeep-shim new`
# line, its comment dropped), from the README that ships in the tarball.
ts_new=
if has 'npm/wasmkeep-actor-[0-9]*.tgz'; then
  ts_new=$(tar -xzOf "$(ls "$release"/npm/wasmkeep-actor-[0-9]*.tgz | head -1)" package/README.md |
    grep -m1 '^npx .* wasmkeep-shim new hello ' | sed 's/ *#.*$//') || true
fi
for lang in "${langs[@]}"; do
  [ "$lang" != ts ] || [ -n "$ts_new" ] || die "ts: the package's README.md has no line 'npx ... wasmkeep-shim new hello ...' to start a project with"
done
if unshare -m --propagation private true 2>/dev/null; then hide=yes; else hide=; say "unshare -m is not allowed here: the checkout is NOT hidden"; fi
# The release folder is the checkout's: the C archive is copied out first.
mkdir -p "$tmp/release/c"
if has 'c/*.tar.gz'; then cp "$release"/c/*.tar.gz "$tmp/release/c/"; fi
# One run: the user's steps for LANG (python-X.Y=<interpreter> for Python),
# then its lines of the summary.
try_run() {
  local run=$1 lang python work log path envs start dir
  lang=${run%%=*}
  python=
  case $run in *=*) python=${run#*=} ;; esac
  [ ! -e "$tmp/$lang" ] || die "$lang is named twice"
  work=$tmp/$lang
  mkdir -p "$work/home"
  log=$tmp/$lang.log
  # Python: this run's interpreter as python3, first on PATH.
  path=$PATH
  if [ -n "$python" ]; then
    mkdir -p "$work/pybin"
    ln -s "$python" "$work/pybin/python3"
    path=$work/pybin:$PATH
  fi
  # Only the registries, the user's own caches and tools: no checkout
  # variables, its npm and pip configuration replaced by the trial's.
  printf 'registry=%s/\n' "$npm_url" >"$work/npmrc"
  envs=(env -u CARGO_TARGET_DIR -u CARGO_BUILD_BUILD_DIR -u WASMKEEP_SDK -u VIRTUAL_ENV -u PYTHONPATH
    WORK="$work" VERSION="$version" RELEASE="$tmp/release" PATH="$path" PY_VERSION="${lang#python-}" TS_NEW="$ts_new"
    npm_config_userconfig="$work/npmrc" npm_config_registry="$npm_url/" npm_config_update_notifier=false
    PIP_INDEX_URL="$pypi_url/simple/" PIP_CONFIG_FILE=/dev/null
    CARGO_REGISTRIES_WASMKEEP_TRIAL_INDEX="sparse+$cargo_url/index/")
  # npx keeps what it installed for a package spec and uses it again while the
  # version matches: a previous run's @wasmkeep/actor of the same version
  # would be used instead of this release's.
  if [ "$lang" = ts ]; then
    for dir in "$HOME"/.npm/_npx/*/; do
      if grep -qs '"@wasmkeep/actor"' "$dir/package.json"; then rm -rf "$dir"; fi
    done
  fi
  start=$(date +%s.%N)
  if [ -n "$hide" ]; then
    "${envs[@]}" unshare -m --propagation private bash -c \
      'mount -t tmpfs -o size=1m none "$1" && cd / && exec bash "$2" "$3"' _ "$root" "$tmp/user.sh" "${lang%%-*}" >"$log" 2>&1 ||
      { tail -60 "$log" >&2; die "$lang: the user's steps (above; the script is $tmp/user.sh)"; }
  else
    "${envs[@]}" bash "$tmp/user.sh" "${lang%%-*}" >"$log" 2>&1 || { tail -60 "$log" >&2; die "$lang: the user's steps (above)"; }
  fi
  printf 'registry-trial: %-11s install + new + build + test + serve + first response, then a watched rebuild, in %.1f s%s\n' "$lang" \
    "$(echo "$(date +%s.%N) - $start" | bc)" "${hide:+ (checkout hidden)}"
  say "  $(grep -m1 '^serve --watch: rebuilt' "$log")"
  # Which interpreter and harness it was: the venv's own line.
  [ -z "$python" ] || say "  $(grep -m1 '^CPython ' "$log" | sed "s|$work/||")"
  # What a TypeScript project installed.
  [ "$lang" != ts ] || say "  $(grep -m1 '^node_modules: ' "$log")"
}
# The Rust trial compiles its project (about 100 s); the others mostly
# install from the registries and wait on their servers: with other
# languages to try, it runs beside them, in a process group of its own
# (stopped with the registries when the script ends), and its lines come
# last, all of its output when it failed (ADR 089).
if tries rust && ((${#runs[@]} > 1)); then
  set -m
  try_run rust >"$tmp/rust.out" 2>&1 &
  rust_beside=$!
  set +m
fi
for run in "${runs[@]}"; do
  [ "$run" = rust ] && [ -n "$rust_beside" ] && continue
  try_run "$run"
done
if [ -n "$rust_beside" ]; then
  status=0
  wait "$rust_beside" || status=$?
  rust_beside=
  cat "$tmp/rust.out"
  [ "$status" = 0 ] || exit 1
fi
