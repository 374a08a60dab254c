#!/usr/bin/env bash
# The Python SDK's tests (run from anywhere; scripts/test.sh calls it after
# setup): the generated bindings match wit/, mypy --strict passes, the guests
# build, then pytest on
# the SDK's own tests (the pyo3 harness driving a probe actor) and on each
# example, all in the venv setup.sh made under target/; last, the two wheels
# (scripts/wheels.sh) and the new-user trial on them (scripts/new-user-trial.sh:
# a fresh venv, the README's quick start, target/debug/wasmkeep-shim serve).
set -euo pipefail
cd "$(dirname "$0")/../.."
py="$PWD/target/py-venv/bin/python"
[ -x "$py" ] || bash sdk-python/scripts/setup.sh

step() { echo; echo "==> python: $*"; }
step "generated bindings and WIT copy match wit/ (sdk-python/scripts/gen.sh --check)"
bash sdk-python/scripts/gen.sh --check
step "types (mypy --strict on the SDK; it ships py.typed)"
(cd sdk-python && MYPYPATH=wasmkeep_actor/_bindings "$py" -m mypy --python-version 3.11 --strict --follow-imports=silent --no-error-summary wasmkeep_actor/*.py && echo "mypy: no issues")
step "guests build (sdk-python/scripts/build-guests.sh; unchanged ones are skipped)"
bash sdk-python/scripts/build-guests.sh

# Compiled components are cached by content hash where the conformance runner
# keeps its own, so a component is compiled once for both.
export WASMKEEP_CACHE_DIR="$PWD/target/wasmkeep-cache"
c=target/components
export COUNTER_PY_WASM="$PWD/$c/counter-py.wasm" ACCOUNT_PY_WASM="$PWD/$c/account-py.wasm" BILLING_PY_WASM="$PWD/$c/billing-py.wasm" \
  ACCOUNT_PY_CANCEL_FIRST_WASM="$PWD/$c/account-py-cancel-first.wasm" \
  BANK_PY_WASM="$PWD/$c/bank-py.wasm" BANK_PY_BROKEN_WASM="$PWD/$c/bank-py-broken.wasm"
# The account's chaos test runs 100 seeds by default (a quick inner loop); the
# test command runs 1,000 (scripts/test.sh exports the same).
export WASMKEEP_CHAOS_SEEDS="${WASMKEEP_CHAOS_SEEDS:-1000}"
# Each pytest keeps about one core busy (the chaos tests run one seed after
# another): the account's and the bank's (about 65 s) run in the background
# beside the SDK's, the counter's, the wheels and the new-user trial, their
# output into a file shown, whole, at the end (ADR 088).
bg_log=$(mktemp "${TMPDIR:-/tmp}/wasmkeep-py-tests-XXXXXX")
bg_pid=
# A step that fails ends the script: the background pytest (the subshell's
# children, then the subshell) is stopped by its PID.
stop_background() {
  if [ -n "$bg_pid" ]; then
    pkill -TERM -P "$bg_pid" 2>/dev/null || true
    kill "$bg_pid" 2>/dev/null || true
    wait "$bg_pid" 2>/dev/null || true
  fi
  rm -f "$bg_log"
}
trap stop_background EXIT
(
  set -e
  for dir in examples/account-py examples/bank-py; do
    step "pytest $dir (run beside the steps before this)"
    (cd "$dir" && "$py" -m pytest -q)
  done
) >"$bg_log" 2>&1 &
bg_pid=$!

for dir in sdk-python examples/counter-py; do
  step "pytest $dir"
  (cd "$dir" && "$py" -m pytest -q)
done

step "wheels (sdk-python/scripts/wheels.sh)"
bash sdk-python/scripts/wheels.sh
step "new-user trial on the wheels (sdk-python/scripts/new-user-trial.sh)"
bash sdk-python/scripts/new-user-trial.sh

bg_status=0
wait "$bg_pid" || bg_status=$?
bg_pid=
cat "$bg_log"
[ "$bg_status" = 0 ] || { echo "python: a pytest in the background failed (exit $bg_status; its whole output is above)" >&2; exit 1; }
