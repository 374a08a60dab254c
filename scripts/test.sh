#!/usr/bin/env bash
# Sets up what is missing, then runs every test: formatting, lints, the WIT
# copies and generated bindings, the host's and SDK's tests, the examples, and
# the conformance matrix.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
# A CI run builds once: incremental caches only cost disk (several GB) and time there.
if [ -n "${CI:-}" ]; then export CARGO_INCREMENTAL=0; fi
# The examples' chaos tests run 100 seeds by default (a quick inner loop for
# a project made from them); the test command holds them to 1,000.
export WASMKEEP_CHAOS_SEEDS="${WASMKEEP_CHAOS_SEEDS:-1000}"

# Each step says when it began; the end lists what each took, so that the
# fresh-machine budget (60 of CI's 90 minutes) is measured, not guessed.
step_name="" step_began=$SECONDS timings=()
step() {
  if [ -n "$step_name" ]; then timings+=("$(printf '%5d s  %s' $((SECONDS - step_began)) "${step_name:0:90}")"); fi
  step_name="$*" step_began=$SECONDS
  echo; echo "==> [at $((SECONDS / 60)) min] $*"
}
# Runs a command whose output is long and shows only the lines that match
# $1; when the command fails, shows all of its output, so that a failure keeps
# its context (a grep in a pipe dropped it; issue 56).
summarised() {
  local pattern=$1 log rc
  shift
  log=$(mktemp)
  if "$@" >"$log" 2>&1; then
    grep -E "$pattern" "$log" || true
    rm -f "$log"
  else
    rc=$?
    echo "--- all of the output of \`$*\`, which failed (exit $rc):"
    cat "$log"
    rm -f "$log"
    return "$rc"
  fi
}
step "set up what is missing (scripts/setup.sh)"
bash scripts/setup.sh

step "format (cargo fmt --check)"
cargo fmt --all --check
step "WIT copies and generated bindings of every SDK match wit/ (cargo xtask gen --check)"
cargo xtask gen --check
step "one feature set of every shared dependency, so wasmtime compiles once per profile (cargo hakari generate --diff, manage-deps --dry-run)"
cargo hakari generate --diff || { echo "host/workspace-hack is out of date: run cargo hakari generate" >&2; exit 1; }
cargo hakari manage-deps --dry-run || { echo "a crate lacks the workspace-hack dependency: run cargo hakari manage-deps" >&2; exit 1; }
step "one version in every package, and a CHANGELOG section for it (cargo xtask versions --check)"
cargo xtask versions --check
step "every language's test harness has every verb, or says why not (cargo xtask parity --check)"
cargo xtask parity --check
step "build the guests: examples and testees (cargo xtask guests)"
cargo xtask guests
step "no import cycle among the host crates' modules, and every arrow docs/architecture.md draws exists in the code (scripts/module-cycles.sh: text checks, no build); no hand-written source file over 700 lines (scripts/file_lengths.py)"
bash scripts/module-cycles.sh
python3 scripts/adr_index.py
python3 scripts/readme_wit_versions.py
python3 scripts/packaged_readmes.py
python3 scripts/file_lengths.py
step "lints (cargo clippy -D warnings)"
cargo clippy --workspace --all-targets --quiet -- -D warnings
step "tests (cargo test; first the C harness library, which the Rust harness's prebuilt driver loads in its contract test and cargo test does not build)"
cargo build --quiet -p wasmkeep-c-harness
cargo test --workspace --quiet
step "the bucket on real servers: moto (S3) and Azurite on 127.0.0.1 (scripts/s3-server.sh, scripts/azurite-server.sh), the bucket contract, bucket check's probes and 16 racing creates over each, then wasmkeep-shim bucket check, two then three node processes over each (kill -9 of the holder), the purge, the process simulation (kill -9, SIGSTOP, durable, operator and app deletes), and the cluster conformance cases on two and three node processes over file://, moto and Azurite, and over TLS"
# Both are stopped by the PIDs their scripts recorded, also when a step fails.
trap 'bash scripts/s3-server.sh stop; bash scripts/azurite-server.sh stop' EXIT
bucket_env="$(bash scripts/s3-server.sh start)
$(bash scripts/azurite-server.sh start)"
(
  eval "$bucket_env"
  summarised "test result|panicked|skipped" \
    cargo test --quiet -p wasmkeep-store --features contract-tests -- _server_meets_the_contract --nocapture
  summarised "test result|panicked|skipped" cargo test --quiet -p wasmkeep-shim --test bucket_check
  summarised "test result|panicked|skipped|took over|process simulation|purged|lost .* answers" \
    cargo test --quiet -p wasmkeep-shim --test node_processes --test process_simulation --test node_process_purge --test lost_answers --test operator_delete_outcomes --test verify -- _over_moto_ _over_azurite_ --nocapture --test-threads 2
  cargo build --quiet -p wasmkeep-shim -p conformance-runner
  for nodes in 2 3; do
    for bucket in "" "$WASMKEEP_TEST_S3" "$WASMKEEP_TEST_AZURE"; do
      echo "cluster cases on $nodes node processes over ${bucket:-file://}"
      summarised "^(FAIL|XPASS|  rule:|  n[0-9]+'s log:|    |conformance:)" \
        target/debug/conformance-runner --no-build --lang rust --node-processes "$nodes" ${bucket:+--bucket "$bucket"}
    done
  done
  for nodes in 2 3; do
    echo "cluster cases on $nodes node processes over file://, over mutual TLS between them (ADR 074)"
    summarised "^(FAIL|XPASS|  rule:|  n[0-9]+'s log:|    |conformance:)" \
      target/debug/conformance-runner --no-build --lang rust --node-processes "$nodes" --tls
  done
  target/debug/wasmkeep-shim bucket check "$WASMKEEP_TEST_S3"
  target/debug/wasmkeep-shim bucket check "$WASMKEEP_TEST_AZURE"
)
bash scripts/s3-server.sh stop
bash scripts/azurite-server.sh stop
trap - EXIT
step "TypeScript tests (the harness addon, then npm test in sdk-ts and examples/*-ts)"
cargo build --quiet -p wasmkeep-node-harness
export COUNTER_WASM="$PWD/target/components/counter-ts.wasm" CHAT_WASM="$PWD/target/components/chat-ts.wasm"
export BANK_WASM="$PWD/target/components/bank-ts.wasm" BANK_BROKEN_WASM="$PWD/target/components/bank-ts-broken.wasm"
for dir in sdk-ts examples/counter-ts examples/chat-ts examples/bank-ts; do
  if [ -f "$dir/package.json" ]; then (cd "$dir" && npm test --silent); fi
done
step "TypeScript: the new-user trial (pack, npm install into an empty folder, the README's actor and test, build, node --test, npx wasmkeep-shim serve)"
cargo build --quiet -p wasmkeep-shim
node sdk-ts/scripts/new-user-trial.js --profile debug
for sdk in sdk-c sdk-python; do
  if [ -f "$sdk/scripts/test.sh" ]; then step "$sdk tests ($sdk/scripts/test.sh)"; bash "$sdk/scripts/test.sh"; fi
done
step "wasmkeep-shim new: a project per language, from new through its build and its test to a first response (scripts/new-project-trial.sh)"
bash scripts/new-project-trial.sh
step "the registry trial: every package of a debug-profile release published to verdaccio, pypiserver and scripts/cargo-registry.py on 127.0.0.1, then per language with the checkout hidden: install, new, build, test, serve, a first response (scripts/registry-trial.sh; ADR 032)"
summarised "^(Ran |OK|FAILED)" python3 -m unittest discover -s scripts/tests
cargo xtask release --profile debug --allow-dirty >/dev/null
# The registries are stopped by the PIDs the script records, also when a step fails.
bash scripts/registry-trial.sh
step "the dashboard in headless chromium over WebDriver: list, open, alarm, deletes, a fault, another origin, 10,000 actors (screenshots in target/dashboard-screenshots/)"
cargo build --quiet -p wasmkeep-shim
target/py-venv/bin/python host/shim/tests/dashboard_browser.py
step "cluster simulation (seeds and steps run, broken variants caught)"
summarised "simulation:|broken variant|test result" cargo test --quiet -p wasmkeep-host --test simulation -- --nocapture
step "hostile load against serve (wasmkeep-load: 20,000 names over 32 connections, the same under 256 descriptors, a 1 GiB WebSocket flood)"
cargo build --quiet -p wasmkeep-bench --bin wasmkeep-load
load="target/debug/wasmkeep-load"
summarised "^names:|FAILED" $load names --shim target/debug/wasmkeep-shim --names 20000 --connections 32
summarised "^names:|FAILED" $load names --shim target/debug/wasmkeep-shim --names 2000 --connections 32 --nofile 256
summarised "^ws-flood:|FAILED" $load ws-flood --shim target/debug/wasmkeep-shim --mib 1024
step "fuzz targets of the host's boundaries, 10 s each (wasmkeep-fuzz; the corpus is host/fuzz/corpus)"
cargo run --quiet -p wasmkeep-fuzz -- --target all --seconds 10 --no-extend
step "conformance matrix"
cargo run --quiet -p conformance-runner -- --no-build
step "done"
echo "what each step took (of $((SECONDS / 60)) min):"
printf '%s\n' "${timings[@]}"
